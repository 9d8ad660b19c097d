// Fuzz target: text in, through the embedded tokenizers and the Translator. The model is the
// API tests' tiny random model (tests/api/test_model.h, loaded by tests/support) with SentencePiece models trained by
// spm_train at start-up (tests/api/test_model.h), built once. Each input is one text for
// Model::EncodeSource and SplitSentences and, split at '\n', up to 6 lines for
// Translator::Translate (beam 2 when the input's length is odd, else greedy with
// BatchOptions::split_sentences, sampling when it is 2 modulo 4; when it is 1 modulo 4,
// TranslateEach with each line's target prefix the next line). What must hold, per
// headwise.hpp:
//   - EncodeSource: ids inside the vocabulary ending with EOS, or kInvalidUtf8;
//   - EncodeTarget: ids inside the vocabulary, none EOS or PAD, none for blank text; or
//     kInvalidUtf8 exactly when EncodeSource says so, or kTokenizer;
//   - TranslateEach with prefixes: per line, hypotheses that begin with the prefix's ids, or
//     kInvalidUtf8 / kTokenizer naming target_prefixes[i], kInvalidUtf8 / kInputTooLong /
//     kInvalidArgument (a blank line with a prefix) naming the line;
//   - SplitSentences: kInvalidUtf8 exactly when EncodeSource says so, else non-empty spans in
//     order, inside the text, on character boundaries, with only whitespace around them;
//   - Translate: one result per line, each line's hypotheses within num_hypotheses, ids inside
//     the vocabulary, text valid UTF-8; or kInvalidUtf8 / kInputTooLong naming the line;
//     sampling twice with the same seed draws the same ids.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "headwise/headwise.hpp"
#include "tests/api/test_model.h"

namespace {

using headwise::ErrorCode;

struct Fixture {
  std::unique_ptr<headwise::testing::LoadedModel> loaded;  // the image and its Model
  std::shared_ptr<const headwise::Model> model;
  std::unique_ptr<headwise::Translator> translator;
};

Fixture* g_fixture = nullptr;

void Die(const headwise::Status& s) {
  std::fprintf(stderr, "text_input fuzzer set-up failed: %s\n", s.ToString().c_str());
  std::exit(1);
}

Fixture* Build() {
  auto f = std::make_unique<Fixture>();
  headwise::testing::ScratchDir dir;
  auto en = headwise::testing::TrainSpm(dir.path(), "en", 120, /*byte_fallback=*/false);
  if (!en.ok()) Die(en.status());
  auto de = headwise::testing::TrainSpm(dir.path(), "de", 400, /*byte_fallback=*/true);
  if (!de.ok()) Die(de.status());
  auto loaded = headwise::testing::LoadSpec(headwise::testing::RandomModelSpec(&*en, &*de));
  if (!loaded.ok()) Die(loaded.status());
  f->loaded = std::move(loaded).value();
  f->model = f->loaded->model;
  headwise::TranslatorLimits limits;
  limits.max_batch = 3;  // 6 lines take two batches
  limits.max_source_tokens = 24;
  limits.max_target_tokens = 8;
  limits.max_beam = 2;
  auto translator = headwise::Translator::Create(f->model, limits);
  if (!translator.ok()) Die(translator.status());
  f->translator = std::move(translator).value();
  return f.release();
}

void CheckIds(const std::vector<int32_t>& ids, int vocab, const char* what) {
  for (int32_t id : ids) FUZZ_CHECK(id >= 0 && id < vocab, "%s: id %d outside the vocabulary", what, id);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_fixture = Build();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_fixture == nullptr) g_fixture = Build();
  const headwise::Model& model = *g_fixture->model;
  const int vocab = model.info().vocab_size;
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto ids = model.EncodeSource(text);
  if (ids.ok()) {
    FUZZ_CHECK(!ids->empty() && ids->back() == model.info().eos_token_id, "no final EOS");
    CheckIds(*ids, vocab, "EncodeSource");
  } else {
    FUZZ_CHECK(ids.status().code() == ErrorCode::kInvalidUtf8, "%s", ids.status().ToString().c_str());
    FUZZ_CHECK(ids.status().message().find("byte offset") != std::string::npos, "%s",
               ids.status().message().c_str());
  }

  auto target = model.EncodeTarget(text);
  if (target.ok()) {
    CheckIds(*target, vocab, "EncodeTarget");
    for (int32_t id : *target) {
      FUZZ_CHECK(id != model.info().eos_token_id && id != model.info().pad_token_id,
                 "EncodeTarget gave EOS or PAD (%d)", id);
    }
    FUZZ_CHECK(!(ids.ok() && ids->size() == 1) || target->empty(), "blank text has target ids");
  } else {
    const ErrorCode code = target.status().code();
    FUZZ_CHECK(code == ErrorCode::kTokenizer ||
                   (code == ErrorCode::kInvalidUtf8 && !ids.ok()),
               "EncodeTarget: %s", target.status().ToString().c_str());
  }

  auto spans = headwise::SplitSentences(text);
  FUZZ_CHECK(spans.ok() == ids.ok() || ids.status().code() != ErrorCode::kInvalidUtf8,
             "SplitSentences and EncodeSource disagree on UTF-8: %s / %s",
             spans.status().ToString().c_str(), ids.status().ToString().c_str());
  if (spans.ok()) {
    size_t previous_end = 0;
    const auto blank = [&](size_t from, size_t to) {
      auto gap = model.EncodeSource(text.substr(from, to - from));
      return gap.ok() && gap->size() == 1;
    };
    const auto boundary = [&](size_t at) {
      return at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
    };
    for (const headwise::SentenceSpan& span : *spans) {
      FUZZ_CHECK(previous_end <= span.begin && span.begin < span.end && span.end <= text.size(),
                 "span [%zu, %zu) after %zu in %zu bytes", span.begin, span.end, previous_end,
                 text.size());
      FUZZ_CHECK(boundary(span.begin) && boundary(span.end), "span [%zu, %zu) cuts a character",
                 span.begin, span.end);
      FUZZ_CHECK(blank(previous_end, span.begin), "not whitespace before the span at %zu",
                 span.begin);
      // ASCII whitespace as Python's str.isspace() has it (the rule's; the tokenizer's blank
      // also takes other control characters, which a sentence may start with).
      const auto space = [&](size_t at) {
        const auto b = static_cast<unsigned char>(text[at]);
        return (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20);
      };
      FUZZ_CHECK(!space(span.begin) && !space(span.end - 1),
                 "the span [%zu, %zu) starts or ends with whitespace", span.begin, span.end);
      previous_end = span.end;
    }
    FUZZ_CHECK(blank(previous_end, text.size()), "not whitespace after the last span");
  }

  std::vector<std::string> lines;
  size_t start = 0;
  while (lines.size() < 6) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  headwise::SearchOptions search;
  headwise::BatchOptions batching;
  if (size % 4 == 1) {  // target prefixes: line i's is line i + 1 (the last line's, the first)
    search.beam_size = 2;
    std::vector<std::string> prefixes;
    for (size_t i = 0; i < lines.size(); ++i) prefixes.push_back(lines[(i + 1) % lines.size()]);
    auto each = g_fixture->translator->TranslateEach(lines, search, batching, prefixes);
    FUZZ_CHECK(each.ok(), "TranslateEach with prefixes: %s", each.status().ToString().c_str());
    FUZZ_CHECK(each->size() == lines.size(), "%zu results for %zu lines", each->size(),
               lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      const auto& line = (*each)[i];
      if (!line.ok()) {
        const ErrorCode code = line.status().code();
        const std::string& m = line.status().message();
        const bool names_prefix = m.rfind("target_prefixes[", 0) == 0;
        const bool names_line = m.rfind("texts[", 0) == 0;
        FUZZ_CHECK((names_prefix && (code == ErrorCode::kInvalidUtf8 ||
                                     code == ErrorCode::kTokenizer)) ||
                       (names_line && (code == ErrorCode::kInvalidUtf8 ||
                                       code == ErrorCode::kInputTooLong ||
                                       code == ErrorCode::kInvalidArgument)),
                   "line %zu: %s", i, line.status().ToString().c_str());
        continue;
      }
      auto prefix = model.EncodeTarget(prefixes[i]);
      FUZZ_CHECK(prefix.ok(), "a translated line's prefix does not encode: %s",
                 prefix.status().ToString().c_str());
      for (const headwise::TextHypothesis& h : *line) {
        CheckIds(h.ids, vocab, "TranslateEach");
        FUZZ_CHECK(h.ids.size() >= prefix->size() &&
                       std::equal(prefix->begin(), prefix->end(), h.ids.begin()),
                   "line %zu: a hypothesis does not begin with its prefix", i);
      }
    }
    return 0;
  }
  if (size % 2 == 1) {
    search.beam_size = 2;
    search.num_hypotheses = 2;
  } else {
    batching.split_sentences = true;
    if (size % 4 == 2) {  // sampling below a minimum length, seeded by the input's size
      search.sample = true;
      search.seed = size;
      search.top_p = 0.9f;
      search.min_length = 2;
    }
  }
  auto out = g_fixture->translator->Translate(lines, search, batching);
  if (!out.ok()) {
    const ErrorCode code = out.status().code();
    FUZZ_CHECK(code == ErrorCode::kInvalidUtf8 || code == ErrorCode::kInputTooLong, "%s",
               out.status().ToString().c_str());
    FUZZ_CHECK(out.status().message().find("texts[") != std::string::npos,
               "the error does not name the line: %s", out.status().message().c_str());
    return 0;
  }
  FUZZ_CHECK(out->size() == lines.size(), "%zu results for %zu lines", out->size(), lines.size());
  for (const auto& hyps : *out) {
    FUZZ_CHECK(!hyps.empty() && hyps.size() <= static_cast<size_t>(search.num_hypotheses),
               "%zu hypotheses", hyps.size());
    for (const headwise::TextHypothesis& h : hyps) {
      CheckIds(h.ids, vocab, "Translate");
      auto back = model.EncodeSource(h.text);
      FUZZ_CHECK(back.ok() || back.status().code() != ErrorCode::kInvalidUtf8,
                 "translation is not valid UTF-8: %s", back.status().message().c_str());
    }
  }
  if (search.sample) {  // a seed fixes every line's draws
    auto again = g_fixture->translator->Translate(lines, search, batching);
    FUZZ_CHECK(again.ok(), "sampling again: %s", again.status().ToString().c_str());
    for (size_t i = 0; i < lines.size(); ++i) {
      FUZZ_CHECK((*again)[i][0].ids == (*out)[i][0].ids, "line %zu: the same seed drew other ids",
                 i);
    }
  }
  return 0;
}
