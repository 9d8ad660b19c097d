// The C API (include/headwise/headwise.h) over the C++ API. Every entry point catches all
// exceptions: nothing thrown by the C++ standard library (std::bad_alloc above all) may unwind
// into C frames, which have no unwind tables and would terminate the process.
#include "headwise/headwise.h"

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
};

struct hw_translator {
  std::unique_ptr<headwise::Translator> translator;
  // Sized to max_batch at create so hw_translate_ids does not allocate.
  std::vector<headwise::TokenSpan> spans;
  // Sentences of the last successful hw_translate_ids; 0 after any other call, because
  // hw_translate also runs TranslateIds and replaces the translator's results.
  size_t id_sentences = 0;
};

struct hw_result {
  struct Hypothesis {
    std::string text;
    float score;
  };
  std::vector<std::vector<Hypothesis>> sentences;
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
  return o;
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
  return p;
}

hw_search_params hw_search_default_params(void) {
  const headwise::SearchOptions d;
  hw_search_params p;
  p.beam_size = d.beam_size;
  p.num_hypotheses = d.num_hypotheses;
  p.length_penalty = d.length_penalty;
  p.max_length = d.max_length;
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
    *out_model = new hw_model{std::move(loaded).value()};
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
    auto created = headwise::Translator::Create(model->model, limits);
    if (!created.ok()) return Fail(created.status());
    auto t = std::make_unique<hw_translator>();
    t->translator = std::move(created).value();
    t->spans.resize(static_cast<size_t>(t->translator->limits().max_batch));
    *out_translator = t.release();
    return HW_OK;
  });
}

void hw_translator_free(hw_translator* translator) { delete translator; }

static_assert(HW_FP16_REQUIRE == static_cast<int>(headwise::Fp16Compute::kRequire) &&
                  HW_FP16_OFF == static_cast<int>(headwise::Fp16Compute::kOff),
              "hw_translator_params.fp16_compute values are headwise::Fp16Compute's");
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
    for (size_t i = 0; i < n; ++i) {
      for (auto& h : (*translated)[i]) {
        result->sentences[i].push_back(hw_result::Hypothesis{std::move(h.text), h.score});
      }
    }
    *out_result = result.release();
    return HW_OK;
  });
}

size_t hw_result_num_sentences(const hw_result* result) {
  return result == nullptr ? 0 : result->sentences.size();
}

size_t hw_result_num_hypotheses(const hw_result* result, size_t sentence) {
  if (result == nullptr || sentence >= result->sentences.size()) return 0;
  return result->sentences[sentence].size();
}

const char* hw_result_text(const hw_result* result, size_t sentence, size_t k) {
  if (hw_result_num_hypotheses(result, sentence) <= k) return nullptr;
  return result->sentences[sentence][k].text.c_str();
}

float hw_result_score(const hw_result* result, size_t sentence, size_t k) {
  if (hw_result_num_hypotheses(result, sentence) <= k) return NAN;
  return result->sentences[sentence][k].score;
}

void hw_result_free(hw_result* result) { delete result; }

hw_status hw_translate_ids(hw_translator* translator, const int32_t* const* ids,
                           const size_t* lengths, size_t n, const hw_search_params* params) {
  // No allocation on the success path: the spans live in `translator`, sized at create.
  return Guard([&] {
    if (translator == nullptr) return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translate_ids: translator is NULL");
    translator->id_sentences = 0;
    if (n > 0 && (ids == nullptr || lengths == nullptr)) {
      return Fail(HW_ERR_INVALID_ARGUMENT, "hw_translate_ids: ids or lengths is NULL");
    }
    if (n > translator->spans.size()) {
      return Fail(HW_ERR_BATCH_TOO_LARGE,
                  ("hw_translate_ids: " + std::to_string(n) + " sentences exceed max_batch " +
                   std::to_string(translator->spans.size()))
                      .c_str());
    }
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] == nullptr && lengths[i] > 0) {
        return Fail(HW_ERR_INVALID_ARGUMENT,
                    ("hw_translate_ids: ids[" + std::to_string(i) + "] is NULL").c_str());
      }
      translator->spans[i] = headwise::TokenSpan{ids[i], lengths[i]};
    }
    const Status s = translator->translator->TranslateIds(translator->spans.data(), n, ToSearch(params));
    if (!s.ok()) return Fail(s);
    translator->id_sentences = n;
    return HW_OK;
  });
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
                   " of sentence " + std::to_string(sentence) + " in the last hw_translate_ids")
                      .c_str());
    }
    const headwise::HypothesisView h = translator->translator->hypothesis(sentence, k);
    *out_ids = h.ids;
    *out_length = h.size;
    *out_score = h.score;
    return HW_OK;
  });
}

}  // extern "C"
