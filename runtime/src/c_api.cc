// The C API (include/headwise/headwise.h) over the C++ API. Every entry point catches all
// exceptions: nothing thrown by the C++ standard library (std::bad_alloc above all) may unwind
// into C frames, which have no unwind tables and would terminate the process.
#include "headwise/headwise.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "headwise/headwise.hpp"

struct hw_model {
  std::shared_ptr<const headwise::Model> model;
  // C views of model->info(), built once at load; every pointer points into that info (or
  // into the vectors below, which are never resized afterwards).
  hw_model_info info{};
  std::vector<hw_attention_block> blocks;
  std::vector<std::vector<hw_head_analysis>> analysis;  // per block
  std::vector<std::vector<const char*>> roles;          // per block, all heads' roles in order
};

struct hw_translator {
  std::unique_ptr<headwise::Translator> translator;
  // Sized to max(max_batch, sort_window) at create so hw_translate_ids and
  // hw_translate_ids_each do not allocate.
  std::vector<headwise::TokenSpan> spans;
  std::vector<headwise::TokenSpan> prefix_spans;  // the same size, for target prefixes
  // Sentences of the last successful hw_translate_ids / hw_translate_ids_each; 0 after any
  // other call, because hw_translate also runs TranslateIds and replaces the translator's
  // results.
  size_t id_sentences = 0;
};

struct hw_result {
  struct Sentence {
    hw_status status = HW_OK;
    std::string error;  // the message when status != HW_OK
    std::vector<headwise::TextHypothesis> hypotheses;
  };
  std::vector<Sentence> sentences;
};

namespace {

using headwise::ErrorCode;
using headwise::Status;

thread_local std::string g_last_error;

// Returns `code` after recording `message`; keeps working when memory is exhausted.
hw_status Fail(hw_status code, const char* message) noexcept {
  try {
    g_last_error = message;
  } catch (...) {
    g_last_error.clear();  // no allocation: clear() keeps the capacity
  }
  return code;
}

hw_status Fail(const Status& s) noexcept {
  try {
    g_last_error = s.message();
  } catch (...) {
    g_last_error.clear();
  }
  return static_cast<hw_status>(s.code());
}

// Runs `body` (returning hw_status) and turns any escaping exception into a status.
template <typename F>
hw_status Guard(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(HW_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return Fail(HW_ERR_INTERNAL, e.what());
  } catch (...) {
    return Fail(HW_ERR_INTERNAL, "unknown exception");
  }
}

headwise::SearchOptions ToSearch(const hw_search_params* p) {
  const hw_search_params d = hw_search_default_params();
  if (p == nullptr) p = &d;
  headwise::SearchOptions o;
  o.beam_size = p->beam_size;
  o.num_hypotheses = p->num_hypotheses;
  o.length_penalty = p->length_penalty;
  o.max_length = p->max_length;
  o.beam_stop = static_cast<headwise::BeamStop>(p->beam_stop);  // ValidateSearchOptions checks it
  o.min_length = p->min_length;
  o.sample = p->sample != 0;
  o.top_k = p->top_k;
  o.top_p = p->top_p;
  o.temperature = p->temperature;
  o.seed = p->seed;
  return o;
}

headwise::BatchOptions ToBatch(const hw_batch_params* p) {
  const hw_batch_params d = hw_batch_default_params();
  if (p == nullptr) p = &d;
  headwise::BatchOptions o;
  o.max_lines = p->max_lines;
  o.max_tokens = p->max_tokens;
  o.sort_by_length = p->sort_by_length != 0;
  o.split_sentences = p->split_sentences != 0;
  return o;
}

// Fills the C views of m->model->info(). Allocates; called inside Guard.
void BuildModelViews(hw_model* m) {
  const headwise::ModelInfo& i = m->model->info();
  hw_model_info& c = m->info;
  c.d_model = i.d_model;
  c.encoder_layers = i.encoder_layers;
  c.decoder_layers = i.decoder_layers;
  c.encoder_ffn_dim = i.encoder_ffn_dim;
  c.decoder_ffn_dim = i.decoder_ffn_dim;
  c.vocab_size = i.vocab_size;
  c.max_position_embeddings = i.max_position_embeddings;
  c.pad_token_id = i.pad_token_id;
  c.eos_token_id = i.eos_token_id;
  c.unk_token_id = i.unk_token_id;
  c.decoder_start_token_id = i.decoder_start_token_id;
  c.activation = i.activation.c_str();
  c.weight_format = i.weight_format.c_str();
  c.has_tokenizer = i.has_tokenizer ? 1 : 0;
  c.format_version = i.format_version;
  c.num_attention_blocks = i.attention.size();
  c.file_bytes = i.file_bytes;
  c.weight_bytes = i.weight_bytes;
  c.source_checkpoint_sha256 = i.source_checkpoint_sha256.c_str();
  c.source_checkpoint_name = i.source_checkpoint_name.c_str();
  c.converter_version = i.converter_version.c_str();
  c.keep_heads_spec = i.keep_heads_spec.c_str();
  c.source_dtype = i.source_dtype.c_str();
  c.analysis_rule = i.analysis_rule.c_str();
  c.analysis_data = i.analysis_data.c_str();
  c.analysis_sha256 = i.analysis_sha256.c_str();
  c.has_shortlist = i.has_shortlist ? 1 : 0;
  c.shortlist_frequent = i.shortlist_frequent;
  c.shortlist_sources = i.shortlist_sources;
  c.shortlist_longest = i.shortlist_longest;
  c.shortlist_entries = i.shortlist_entries;
  c.shortlist_description = i.shortlist_description.c_str();

  const size_t n = i.attention.size();
  m->roles.resize(n);
  m->analysis.resize(n);
  m->blocks.resize(n);
  for (size_t b = 0; b < n; ++b) {
    const headwise::AttentionBlockInfo& a = i.attention[b];
    std::vector<const char*>& roles = m->roles[b];
    size_t total = 0;
    for (const auto& h : a.analysis) total += h.roles.size();
    roles.reserve(total);  // no reallocation below: the analysis entries point into it
    for (const auto& h : a.analysis) {
      hw_head_analysis e{};
      e.source_head = h.source_head;
      e.relevance = h.relevance;
      e.confidence = h.confidence;
      e.michel = h.michel;
      e.num_roles = h.roles.size();
      e.roles = roles.data() + roles.size();
      for (const std::string& r : h.roles) roles.push_back(r.c_str());
      m->analysis[b].push_back(e);
    }
    hw_attention_block& c_block = m->blocks[b];
    c_block.kind = static_cast<hw_attention_kind>(a.kind);
    c_block.layer = a.layer;
    c_block.name = a.name.c_str();
    c_block.num_heads = a.num_heads;
    c_block.original_num_heads = a.original_num_heads;
    c_block.head_dim = a.head_dim;
    c_block.kept_heads = a.kept_heads.empty() ? nullptr : a.kept_heads.data();
    c_block.gate_log_alpha = a.gate_log_alpha.empty() ? nullptr : a.gate_log_alpha.data();
    c_block.analysis = m->analysis[b].empty() ? nullptr : m->analysis[b].data();
  }
}

hw_hypothesis ToC(const headwise::TextHypothesis& h) {
  hw_hypothesis c;
  c.text = h.text.c_str();
  c.ids = h.ids.data();
  c.length = h.ids.size();
  c.score = h.score;
  c.finished = h.finished ? 1 : 0;
  return c;
}

const hw_result::Sentence* SentenceAt(const hw_result* result, size_t sentence) {
  if (result == nullptr || sentence >= result->sentences.size()) return nullptr;
  return &result->sentences[sentence];
}

}  // namespace

extern "C" {

const char* hw_status_name(hw_status status) {
  return headwise::ErrorCodeName(static_cast<ErrorCode>(status));
}

const char* hw_last_error_message(void) { return g_last_error.c_str(); }

const char* hw_version(void) { return headwise::Version(); }

hw_load_params hw_load_default_params(void) {
  const headwise::LoadOptions d;
  hw_load_params p;
  p.verify_checksum = d.verify_checksum ? 1 : 0;
  return p;
}

hw_translator_params hw_translator_default_params(void) {
  const headwise::TranslatorLimits d;
  hw_translator_params p;
  p.max_batch = d.max_batch;
  p.max_source_tokens = d.max_source_tokens;
  p.max_target_tokens = d.max_target_tokens;
  p.max_beam = d.max_beam;
  p.num_threads = d.num_threads;
  p.max_memory_bytes = d.max_memory_bytes;
  p.fp16_compute = static_cast<int>(d.fp16_compute);
  p.sort_window = d.sort_window;
  p.use_shortlist = d.use_shortlist ? 1 : 0;
  p.worker_wait = static_cast<int>(d.worker_wait);
  p.batch_lanes = d.batch_lanes;
  return p;
}

static_assert(HW_BEAM_STOP_EXHAUSTIVE == static_cast<int>(headwise::BeamStop::kExhaustive) &&
                  HW_BEAM_STOP_TOP_EOS == static_cast<int>(headwise::BeamStop::kTopEos) &&
                  HW_BEAM_STOP_OUTSCORED == static_cast<int>(headwise::BeamStop::kOutscored),
              "hw_beam_stop values are headwise::BeamStop's");

hw_search_params hw_search_default_params(void) {
  const headwise::SearchOptions d;
  hw_search_params p;
  p.beam_size = d.beam_size;
  p.num_hypotheses = d.num_hypotheses;
  p.length_penalty = d.length_penalty;
  p.max_length = d.max_length;
  p.beam_stop = static_cast<int>(d.beam_stop);
  p.min_length = d.min_length;
  p.sample = d.sample ? 1 : 0;
  p.top_k = d.top_k;
  p.top_p = d.top_p;
  p.temperature = d.temperature;
  p.seed = d.seed;
  return p;
}

hw_batch_params hw_batch_default_params(void) {
  const headwise::BatchOptions d;
  hw_batch_params p;
  p.max_lines = d.max_lines;
  p.max_tokens = d.max_tokens;
  p.sort_by_length = d.sort_by_length ? 1 : 0;
  p.split_sentences = d.split_sentences ? 1 : 0;
  return p;
}

hw_status hw_model_load(const char* path, const hw_load_params* params, hw_model** out_model) {
  return Guard([&] {
    if (out_model == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_model_load: out_model is NULL");
    *out_model = nullptr;
    if (path == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_model_load: path is NULL");
    headwise::LoadOptions options;
    if (params != nullptr) options.verify_checksum = params->verify_checksum != 0;
    auto loaded = headwise::Model::Load(path, options);
    if (!loaded.ok()) return Fail(loaded.status());
    auto m = std::make_unique<hw_model>();
    m->model = std::move(loaded).value();
    BuildModelViews(m.get());
    *out_model = m.release();
    return HW_OK;
  });
}

void hw_model_free(hw_model* model) { delete model; }

int hw_model_vocab_size(const hw_model* model) {
  if (model == nullptr) {
    Fail(HW_ERR_INVALID_ARGUMENT, "hw_model_vocab_size: model is NULL");
    return 0;
  }
  return model->model->info().vocab_size;
}

hw_status hw_model_get_info(const hw_model* model, hw_model_info* out_info) {
  if (model == nullptr || out_info == nullptr) {
    return Fail(HW_ERR_INVALID_ARGUMENT, "hw_model_get_info: model and out_info must not be NULL");
  }
  *out_info = model->info;
  return HW_OK;
}

hw_status hw_model_get_attention_block(const hw_model* model, size_t index,
                                       hw_attention_block* out_block) {
  return Guard([&] {
    if (model == nullptr || out_block == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  "hw_model_get_attention_block: model and out_block must not be NULL");
    }
    if (index >= model->blocks.size()) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  ("hw_model_get_attention_block: block " + std::to_string(index) +
                   " of a model with " + std::to_string(model->blocks.size()) + " blocks")
                      .c_str());
    }
    *out_block = model->blocks[index];
    return HW_OK;
  });
}

namespace {

// hw_model_encode and hw_model_encode_target: `encode` is Model::EncodeSource or EncodeTarget.
using EncodeFn = headwise::Result<std::vector<int32_t>> (headwise::Model::*)(const std::string&)
    const;
hw_status EncodeText(const char* fn, const hw_model* model, const char* text, size_t length,
                     int32_t* out_ids, size_t capacity, size_t* out_length, EncodeFn encode) {
  return Guard([&] {
    if (model == nullptr || out_length == nullptr || (text == nullptr && length > 0) ||
        (out_ids == nullptr && capacity > 0)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  (std::string(fn) + ": model, out_length, text (unless length is 0) and out_ids "
                                     "(unless capacity is 0) must not be NULL")
                      .c_str());
    }
    *out_length = 0;
    auto ids = ((*model->model).*encode)(std::string(text == nullptr ? "" : text, length));
    if (!ids.ok()) return Fail(ids.status());
    *out_length = ids->size();
    std::copy_n(ids->begin(), std::min(capacity, ids->size()), out_ids);
    return HW_OK;
  });
}

}  // namespace

hw_status hw_model_encode(const hw_model* model, const char* text, size_t length,
                          int32_t* out_ids, size_t capacity, size_t* out_length) {
  return EncodeText("hw_model_encode", model, text, length, out_ids, capacity, out_length,
                    &headwise::Model::EncodeSource);
}

hw_status hw_model_encode_target(const hw_model* model, const char* text, size_t length,
                                 int32_t* out_ids, size_t capacity, size_t* out_length) {
  return EncodeText("hw_model_encode_target", model, text, length, out_ids, capacity, out_length,
                    &headwise::Model::EncodeTarget);
}

hw_status hw_split_sentences(const char* text, size_t length, size_t* out_spans, size_t capacity,
                             size_t* out_count) {
  return Guard([&] {
    if (out_count == nullptr || (text == nullptr && length > 0) ||
        (out_spans == nullptr && capacity > 0)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  "hw_split_sentences: out_count, text (unless length is 0) and out_spans "
                  "(unless capacity is 0) must not be NULL");
    }
    *out_count = 0;
    auto spans = headwise::SplitSentences(std::string(text == nullptr ? "" : text, length));
    if (!spans.ok()) return Fail(spans.status());
    *out_count = spans->size();
    for (size_t i = 0; i < std::min(capacity, spans->size()); ++i) {
      out_spans[2 * i] = (*spans)[i].begin;
      out_spans[2 * i + 1] = (*spans)[i].end;
    }
    return HW_OK;
  });
}

hw_status hw_model_decode(const hw_model* model, const int32_t* ids, size_t n, char* out_text,
                          size_t capacity, size_t* out_length) {
  return Guard([&] {
    if (model == nullptr || out_length == nullptr || (ids == nullptr && n > 0) ||
        (out_text == nullptr && capacity > 0)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  "hw_model_decode: model, out_length, ids (unless n is 0) and out_text "
                  "(unless capacity is 0) must not be NULL");
    }
    *out_length = 0;
    auto text = model->model->DecodeTarget(ids, n);
    if (!text.ok()) return Fail(text.status());
    *out_length = text->size();
    if (capacity > 0) {
      const size_t copied = std::min(capacity - 1, text->size());
      std::copy_n(text->data(), copied, out_text);
      out_text[copied] = '\0';
    }
    return HW_OK;
  });
}

hw_status hw_translator_create(const hw_model* model, const hw_translator_params* params,
                               hw_translator** out_translator) {
  return Guard([&] {
    if (out_translator == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translator_create: out_translator is NULL");
    }
    *out_translator = nullptr;
    if (model == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translator_create: model is NULL");
    const hw_translator_params d = hw_translator_default_params();
    if (params == nullptr) params = &d;
    headwise::TranslatorLimits limits;
    limits.max_batch = params->max_batch;
    limits.max_source_tokens = params->max_source_tokens;
    limits.max_target_tokens = params->max_target_tokens;
    limits.max_beam = params->max_beam;
    limits.num_threads = params->num_threads;
    limits.max_memory_bytes = params->max_memory_bytes;
    // Out-of-range values reach Translator::Create, which names them (kInvalidArgument).
    limits.fp16_compute = static_cast<headwise::Fp16Compute>(params->fp16_compute);
    limits.sort_window = params->sort_window;
    limits.use_shortlist = params->use_shortlist != 0;
    limits.worker_wait = static_cast<headwise::WorkerWait>(params->worker_wait);
    limits.batch_lanes = params->batch_lanes;
    auto created = headwise::Translator::Create(model->model, limits);
    if (!created.ok()) return Fail(created.status());
    auto t = std::make_unique<hw_translator>();
    t->translator = std::move(created).value();
    const headwise::TranslatorLimits& made = t->translator->limits();
    t->spans.resize(static_cast<size_t>(std::max(made.max_batch, made.sort_window)));
    t->prefix_spans.resize(t->spans.size());
    *out_translator = t.release();
    return HW_OK;
  });
}

void hw_translator_free(hw_translator* translator) { delete translator; }

static_assert(HW_FP16_REQUIRE == static_cast<int>(headwise::Fp16Compute::kRequire) &&
                  HW_FP16_OFF == static_cast<int>(headwise::Fp16Compute::kOff),
              "hw_translator_params.fp16_compute values are headwise::Fp16Compute's");
static_assert(HW_WORKERS_YIELD == static_cast<int>(headwise::WorkerWait::kYield) &&
                  HW_WORKERS_SPIN == static_cast<int>(headwise::WorkerWait::kSpin),
              "hw_translator_params.worker_wait values are headwise::WorkerWait's");
static_assert(HW_ATTENTION_DECODER_CROSS == static_cast<int>(headwise::AttentionKind::kDecoderCross) &&
                  HW_ATTENTION_DECODER_SELF == static_cast<int>(headwise::AttentionKind::kDecoderSelf),
              "hw_attention_kind values are headwise::AttentionKind's");
static_assert(HW_PRECISION_INT8 == static_cast<int>(headwise::MatmulPrecision::kInt8) &&
                  HW_PRECISION_F16 == static_cast<int>(headwise::MatmulPrecision::kF16),
              "hw_precision values are headwise::MatmulPrecision's");

hw_precision hw_translator_precision(const hw_translator* translator) {
  if (translator == nullptr) return HW_PRECISION_F32;
  return static_cast<hw_precision>(translator->translator->matmul_precision());
}

const char* hw_precision_name(hw_precision precision) {
  return headwise::MatmulPrecisionName(static_cast<headwise::MatmulPrecision>(precision));
}

const char* hw_translator_precision_note(const hw_translator* translator) {
  return translator == nullptr ? "" : translator->translator->precision_note().c_str();
}

const char* hw_translator_kernel_paths(const hw_translator* translator) {
  return translator == nullptr ? "" : translator->translator->kernel_paths().c_str();
}

int hw_translator_uses_shortlist(const hw_translator* translator) {
  return translator != nullptr && translator->translator->uses_shortlist() ? 1 : 0;
}

hw_status hw_translate(hw_translator* translator, const char* const* texts, size_t n,
                       const hw_search_params* params, hw_result** out_result) {
  return Guard([&] {
    if (out_result == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translate: out_result is NULL");
    *out_result = nullptr;
    if (translator == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translate: translator is NULL");
    if (texts == nullptr && n > 0) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translate: texts is NULL");
    translator->id_sentences = 0;
    std::vector<std::string> lines;
    lines.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (texts[i] == nullptr) {
        return Fail(HW_ERR_INVALID_ARGUMENT,
                    ("hw_translate: texts[" + std::to_string(i) + "] is NULL").c_str());
      }
      lines.emplace_back(texts[i]);
    }
    auto translated = translator->translator->Translate(lines, ToSearch(params));
    if (!translated.ok()) return Fail(translated.status());
    auto result = std::make_unique<hw_result>();
    result->sentences.resize(n);
    for (size_t i = 0; i < n; ++i) result->sentences[i].hypotheses = std::move((*translated)[i]);
    *out_result = result.release();
    return HW_OK;
  });
}

namespace {

// texts[i] with lengths[i] bytes, or NUL-terminated when lengths is NULL. `null_is_empty`: a
// NULL text is "" (prefixes) unless a length says otherwise; any other NULL text fails.
hw_status CopyTexts(const std::string& fn, const char* what, const char* const* texts,
                    const size_t* lengths, size_t n, bool null_is_empty,
                    std::vector<std::string>* out) {
  out->clear();
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t length = lengths != nullptr ? lengths[i] : 0;
    if (texts[i] == nullptr && ((lengths == nullptr && !null_is_empty) || length > 0)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  (fn + ": " + what + "[" + std::to_string(i) + "] is NULL").c_str());
    }
    if (texts[i] == nullptr) {
      out->emplace_back();
    } else if (lengths == nullptr) {
      out->emplace_back(texts[i]);
    } else {
      out->emplace_back(texts[i], length);
    }
  }
  return HW_OK;
}

hw_status TranslateEach(const char* name, hw_translator* translator, const char* const* texts,
                        const size_t* lengths, size_t n, const char* const* prefixes,
                        const size_t* prefix_lengths, const hw_search_params* params,
                        const hw_batch_params* batch, hw_result** out_result) {
  return Guard([&] {
    const std::string fn(name);
    if (out_result == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, (fn + ": out_result is NULL").c_str());
    *out_result = nullptr;
    if (translator == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, (fn + ": translator is NULL").c_str());
    if (texts == nullptr && n > 0) return Fail(HW_ERR_INVALID_ARGUMENT, (fn + ": texts is NULL").c_str());
    translator->id_sentences = 0;
    std::vector<std::string> lines, prefix_texts;
    hw_status st = CopyTexts(fn, "texts", texts, lengths, n, false, &lines);
    if (st == HW_OK && prefixes != nullptr) {
      st = CopyTexts(fn, "prefixes", prefixes, prefix_lengths, n, true, &prefix_texts);
    }
    if (st != HW_OK) return st;
    auto translated = translator->translator->TranslateEach(lines, ToSearch(params), ToBatch(batch),
                                                            prefix_texts);
    if (!translated.ok()) return Fail(translated.status());
    auto result = std::make_unique<hw_result>();
    result->sentences.resize(n);
    for (size_t i = 0; i < n; ++i) {
      auto& line = (*translated)[i];
      hw_result::Sentence& out = result->sentences[i];
      if (line.ok()) {
        out.hypotheses = std::move(line).value();
      } else {
        out.status = static_cast<hw_status>(line.status().code());
        out.error = line.status().message();
      }
    }
    *out_result = result.release();
    return HW_OK;
  });
}

}  // namespace

hw_status hw_translate_each(hw_translator* translator, const char* const* texts,
                            const size_t* lengths, size_t n, const hw_search_params* params,
                            hw_result** out_result) {
  return TranslateEach("hw_translate_each", translator, texts, lengths, n, nullptr, nullptr,
                       params, nullptr, out_result);
}

hw_status hw_translate_each_batched(hw_translator* translator, const char* const* texts,
                                    const size_t* lengths, size_t n,
                                    const hw_search_params* params,
                                    const hw_batch_params* batch, hw_result** out_result) {
  return TranslateEach("hw_translate_each_batched", translator, texts, lengths, n, nullptr,
                       nullptr, params, batch, out_result);
}

hw_status hw_translate_each_prefixed(hw_translator* translator, const char* const* texts,
                                     const size_t* lengths, size_t n, const char* const* prefixes,
                                     const size_t* prefix_lengths,
                                     const hw_search_params* params, const hw_batch_params* batch,
                                     hw_result** out_result) {
  return TranslateEach("hw_translate_each_prefixed", translator, texts, lengths, n, prefixes,
                       prefix_lengths, params, batch, out_result);
}

size_t hw_result_num_sentences(const hw_result* result) {
  return result == nullptr ? 0 : result->sentences.size();
}

size_t hw_result_num_hypotheses(const hw_result* result, size_t sentence) {
  const hw_result::Sentence* s = SentenceAt(result, sentence);
  return s == nullptr ? 0 : s->hypotheses.size();
}

const char* hw_result_text(const hw_result* result, size_t sentence, size_t k) {
  if (hw_result_num_hypotheses(result, sentence) <= k) return nullptr;
  return result->sentences[sentence].hypotheses[k].text.c_str();
}

float hw_result_score(const hw_result* result, size_t sentence, size_t k) {
  if (hw_result_num_hypotheses(result, sentence) <= k) return NAN;
  return result->sentences[sentence].hypotheses[k].score;
}

hw_status hw_result_status(const hw_result* result, size_t sentence) {
  const hw_result::Sentence* s = SentenceAt(result, sentence);
  return s == nullptr ? HW_ERR_INVALID_ARGUMENT : s->status;
}

const char* hw_result_error_message(const hw_result* result, size_t sentence) {
  const hw_result::Sentence* s = SentenceAt(result, sentence);
  return s == nullptr ? "" : s->error.c_str();
}

hw_status hw_result_get_hypothesis(const hw_result* result, size_t sentence, size_t k,
                                   hw_hypothesis* out_hypothesis) {
  return Guard([&] {
    if (out_hypothesis == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT, "hw_result_get_hypothesis: out_hypothesis is NULL");
    }
    if (k >= hw_result_num_hypotheses(result, sentence)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  ("hw_result_get_hypothesis: no hypothesis " + std::to_string(k) +
                   " of sentence " + std::to_string(sentence) + " in the result")
                      .c_str());
    }
    *out_hypothesis = ToC(result->sentences[sentence].hypotheses[k]);
    return HW_OK;
  });
}

void hw_result_free(hw_result* result) { delete result; }

namespace {

// The spans of n target prefixes in translator->prefix_spans (sized at create), or NULL when
// prefix_ids is NULL (no prefixes); a NULL prefix_ids[i] with length 0 is no prefix for source
// i. Both arrays or neither.
hw_status PrefixSpans(const char* fn, hw_translator* translator, const int32_t* const* prefix_ids,
                      const size_t* prefix_lengths, size_t n, const headwise::TokenSpan** out) {
  *out = nullptr;
  if (prefix_ids == nullptr && prefix_lengths == nullptr) return HW_OK;
  if (n > 0 && (prefix_ids == nullptr || prefix_lengths == nullptr)) {
    return Fail(HW_ERR_INVALID_ARGUMENT,
                (std::string(fn) + ": prefix_ids and prefix_lengths must be both NULL or both set")
                    .c_str());
  }
  // A NULL pointer with a length fails in the runtime, naming the source.
  for (size_t i = 0; i < n; ++i) translator->prefix_spans[i] = {prefix_ids[i], prefix_lengths[i]};
  *out = translator->prefix_spans.data();
  return HW_OK;
}

hw_status TranslateIds(const char* fn, hw_translator* translator, const int32_t* const* ids,
                       const size_t* lengths, size_t n, const int32_t* const* prefix_ids,
                       const size_t* prefix_lengths, const hw_search_params* params) {
  // No allocation on the success path: the spans live in `translator`, sized at create.
  return Guard([&] {
    if (translator == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT, (std::string(fn) + ": translator is NULL").c_str());
    }
    translator->id_sentences = 0;
    if (n > 0 && (ids == nullptr || lengths == nullptr)) {
      return Fail(HW_ERR_INVALID_ARGUMENT, (std::string(fn) + ": ids or lengths is NULL").c_str());
    }
    const auto max_batch = static_cast<size_t>(translator->translator->limits().max_batch);
    if (n > max_batch) {
      return Fail(HW_ERR_BATCH_TOO_LARGE,
                  (std::string(fn) + ": " + std::to_string(n) + " sentences exceed max_batch " +
                   std::to_string(max_batch))
                      .c_str());
    }
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] == nullptr && lengths[i] > 0) {
        return Fail(HW_ERR_INVALID_ARGUMENT,
                    (std::string(fn) + ": ids[" + std::to_string(i) + "] is NULL").c_str());
      }
      translator->spans[i] = headwise::TokenSpan{ids[i], lengths[i]};
    }
    const headwise::TokenSpan* prefixes = nullptr;
    if (const hw_status st = PrefixSpans(fn, translator, prefix_ids, prefix_lengths, n, &prefixes);
        st != HW_OK) {
      return st;
    }
    const Status s = translator->translator->TranslateIds(translator->spans.data(), n,
                                                          ToSearch(params), prefixes);
    if (!s.ok()) return Fail(s);
    translator->id_sentences = n;
    return HW_OK;
  });
}

hw_status TranslateIdsEach(const char* fn, hw_translator* translator, const int32_t* const* ids,
                           const size_t* lengths, size_t n, const int32_t* const* prefix_ids,
                           const size_t* prefix_lengths, const hw_search_params* params,
                           const hw_batch_params* batch) {
  // No allocation on the success path: the spans live in `translator`, sized at create.
  return Guard([&] {
    if (translator == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT, (std::string(fn) + ": translator is NULL").c_str());
    }
    translator->id_sentences = 0;
    if (n > 0 && (ids == nullptr || lengths == nullptr)) {
      return Fail(HW_ERR_INVALID_ARGUMENT, (std::string(fn) + ": ids or lengths is NULL").c_str());
    }
    const auto window = static_cast<size_t>(translator->translator->limits().sort_window);
    if (n > window) {
      return Fail(HW_ERR_BATCH_TOO_LARGE,
                  (std::string(fn) + ": " + std::to_string(n) +
                   " sources exceed the sort window " + std::to_string(window))
                      .c_str());
    }
    for (size_t i = 0; i < n; ++i) {
      // A NULL pointer with a length fails that source alone (TranslateIdsEach names it).
      translator->spans[i] = headwise::TokenSpan{ids[i], lengths[i]};
    }
    const headwise::TokenSpan* prefixes = nullptr;
    if (const hw_status st = PrefixSpans(fn, translator, prefix_ids, prefix_lengths, n, &prefixes);
        st != HW_OK) {
      return st;
    }
    const Status s = translator->translator->TranslateIdsEach(
        translator->spans.data(), n, ToSearch(params), ToBatch(batch), prefixes);
    if (!s.ok()) return Fail(s);
    translator->id_sentences = n;
    return HW_OK;
  });
}

}  // namespace

hw_status hw_translate_ids(hw_translator* translator, const int32_t* const* ids,
                           const size_t* lengths, size_t n, const hw_search_params* params) {
  return TranslateIds("hw_translate_ids", translator, ids, lengths, n, nullptr, nullptr, params);
}

hw_status hw_translate_ids_prefixed(hw_translator* translator, const int32_t* const* ids,
                                    const size_t* lengths, size_t n,
                                    const int32_t* const* prefix_ids,
                                    const size_t* prefix_lengths, const hw_search_params* params) {
  return TranslateIds("hw_translate_ids_prefixed", translator, ids, lengths, n, prefix_ids,
                      prefix_lengths, params);
}

hw_status hw_translate_ids_each(hw_translator* translator, const int32_t* const* ids,
                                const size_t* lengths, size_t n, const hw_search_params* params,
                                const hw_batch_params* batch) {
  return TranslateIdsEach("hw_translate_ids_each", translator, ids, lengths, n, nullptr, nullptr,
                          params, batch);
}

hw_status hw_translate_ids_each_prefixed(hw_translator* translator, const int32_t* const* ids,
                                         const size_t* lengths, size_t n,
                                         const int32_t* const* prefix_ids,
                                         const size_t* prefix_lengths,
                                         const hw_search_params* params,
                                         const hw_batch_params* batch) {
  return TranslateIdsEach("hw_translate_ids_each_prefixed", translator, ids, lengths, n,
                          prefix_ids, prefix_lengths, params, batch);
}

hw_status hw_translator_line_status(const hw_translator* translator, size_t sentence) {
  if (translator == nullptr || sentence >= translator->id_sentences) return HW_OK;
  return static_cast<hw_status>(translator->translator->line_code(sentence));
}

const char* hw_translator_line_error_message(const hw_translator* translator, size_t sentence) {
  if (translator == nullptr || sentence >= translator->id_sentences) return "";
  try {
    return translator->translator->line_status(sentence).message().c_str();
  } catch (...) {  // out of memory while building the message
    return "";
  }
}

int hw_translator_sort_window(const hw_translator* translator) {
  return translator == nullptr ? 0 : translator->translator->limits().sort_window;
}

int hw_translator_batch_lanes(const hw_translator* translator) {
  return translator == nullptr ? 0 : translator->translator->limits().batch_lanes;
}

size_t hw_translator_num_hypotheses(const hw_translator* translator, size_t sentence) {
  if (translator == nullptr || sentence >= translator->id_sentences) return 0;
  return translator->translator->num_hypotheses(sentence);
}

hw_status hw_translator_hypothesis(const hw_translator* translator, size_t sentence, size_t k,
                                   const int32_t** out_ids, size_t* out_length, float* out_score) {
  return Guard([&] {
    if (translator == nullptr || out_ids == nullptr || out_length == nullptr || out_score == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  "hw_translator_hypothesis: translator and out pointers must not be NULL");
    }
    if (k >= hw_translator_num_hypotheses(translator, sentence)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  ("hw_translator_hypothesis: no hypothesis " + std::to_string(k) +
                   " of sentence " + std::to_string(sentence) +
                   " in the last hw_translate_ids / hw_translate_ids_each")
                      .c_str());
    }
    const headwise::HypothesisView h = translator->translator->hypothesis(sentence, k);
    *out_ids = h.ids;
    *out_length = h.size;
    *out_score = h.score;
    return HW_OK;
  });
}

hw_status hw_translator_get_hypothesis(const hw_translator* translator, size_t sentence, size_t k,
                                       hw_hypothesis* out_hypothesis) {
  return Guard([&] {
    if (translator == nullptr || out_hypothesis == nullptr) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  "hw_translator_get_hypothesis: translator and out_hypothesis must not be NULL");
    }
    if (k >= hw_translator_num_hypotheses(translator, sentence)) {
      return Fail(HW_ERR_INVALID_ARGUMENT,
                  ("hw_translator_get_hypothesis: no hypothesis " + std::to_string(k) +
                   " of sentence " + std::to_string(sentence) +
                   " in the last hw_translate_ids / hw_translate_ids_each")
                      .c_str());
    }
    const headwise::HypothesisView h = translator->translator->hypothesis(sentence, k);
    hw_hypothesis c;
    c.text = nullptr;
    c.ids = h.ids;
    c.length = h.size;
    c.score = h.score;
    c.finished = h.finished ? 1 : 0;
    *out_hypothesis = c;
    return HW_OK;
  });
}

}  // extern "C"
