/* headwise/headwise.h: the C API of the headwise runtime (a thin layer over headwise.hpp).
 *
 *   hw_model* model = NULL;
 *   if (hw_model_load("models/en-de/model.hwm", NULL, &model) != HW_OK) {
 *     fprintf(stderr, "%s\n", hw_last_error_message());
 *     return 1;
 *   }
 *   hw_translator_params tp = hw_translator_default_params();
 *   hw_translator* tr = NULL;
 *   hw_translator_create(model, &tp, &tr);
 *   hw_search_params sp = hw_search_default_params();
 *   const char* texts[] = {"Open the file."};
 *   hw_result* res = NULL;
 *   if (hw_translate(tr, texts, 1, &sp, &res) == HW_OK) {
 *     printf("%s\n", hw_result_text(res, 0, 0));
 *     hw_result_free(res);
 *   }
 *   hw_translator_free(tr);
 *   hw_model_free(model);
 *
 * Arguments: every params pointer may be NULL (defaults); a NULL handle or output pointer is
 * HW_ERR_INVALID_ARGUMENT; on failure output pointers are set to NULL.
 * Ownership: every *_create / *_load has its *_free; freeing NULL is a no-op. A translator
 * holds a reference on its model, so the model may be freed first. Strings returned by
 * accessors belong to the object they came from.
 * Threads: a model may be shared by translators on many threads; a translator serves one call
 * at a time (hw_translator_num_hypotheses / hw_translator_hypothesis included). An hw_result is
 * never modified after hw_translate returns it: any thread may read it. hw_last_error_message()
 * is per thread and describes the last failed call of that thread.
 * Decoding semantics and limits: see headwise.hpp.
 */
#ifndef HEADWISE_HEADWISE_H_
#define HEADWISE_HEADWISE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same values as headwise::ErrorCode. */
typedef enum hw_status {
  HW_OK = 0,
  HW_ERR_INVALID_ARGUMENT = 10,
  HW_ERR_INPUT_TOO_LONG = 11,
  HW_ERR_BATCH_TOO_LARGE = 12,
  HW_ERR_INVALID_UTF8 = 13,
  HW_ERR_IO = 20,
  HW_ERR_INVALID_MODEL = 21,
  HW_ERR_UNSUPPORTED_VERSION = 22,
  HW_ERR_CHECKSUM_MISMATCH = 23,
  HW_ERR_INVALID_CHECKPOINT = 24,
  HW_ERR_OUT_OF_MEMORY = 30,
  HW_ERR_LIMIT_EXCEEDED = 31,
  HW_ERR_BACKEND = 40,
  HW_ERR_TOKENIZER = 41,
  HW_ERR_INTERNAL = 50
} hw_status;

typedef struct hw_model hw_model;
typedef struct hw_translator hw_translator;
typedef struct hw_result hw_result;

typedef struct hw_load_params {
  int verify_checksum; /* default 1 */
} hw_load_params;

typedef struct hw_translator_params {
  int max_batch;           /* default 8 */
  int max_source_tokens;   /* default 256, EOS included */
  int max_target_tokens;   /* default 256, EOS included */
  int max_beam;            /* default 4 */
  int num_threads;         /* default 1 */
  size_t max_memory_bytes; /* default 0 = no cap */
  int fp16_compute;        /* HW_FP16_AUTO (default), HW_FP16_OFF or HW_FP16_REQUIRE */
  /* Lines sorted by length and batched together (headwise.hpp, TranslatorLimits::sort_window):
   * hw_translate_ids_each takes at most this many sources; the text calls batch in windows of
   * this many lines. Default 0 = 16 x max_batch. */
  int sort_window;
  /* default 1: compute the output layer over the model's vocabulary shortlist, when it has one
   * (headwise.hpp, TranslatorLimits::use_shortlist); 0: over the whole vocabulary. */
  int use_shortlist;
  /* HW_WORKERS_YIELD (default) or HW_WORKERS_SPIN: how the pool's workers wait between the
   * parallel loops of a call (headwise.hpp, WorkerWait: yielding workers spin at most 200 us
   * between loops, spinning ones until the call ends; for cores the process has to itself). */
  int worker_wait;
  /* Batch lanes (headwise.hpp, TranslatorLimits::batch_lanes): a call of several sentences is
   * dealt out to this many sub-batches, each run whole on one thread of the pool. Default 0 =
   * num_threads where the operators read the weights in place (int8; fp32 on x86 with AVX2),
   * else 1; 1 = off. hw_translator_batch_lanes reports the value in use. */
  int batch_lanes;
} hw_translator_params;

/* fp16 arithmetic for models with F16 weights (headwise.hpp, Fp16Compute): AUTO uses it on
 * aarch64 CPUs with ARMv8.2 FP16 arithmetic and falls back to F32 elsewhere; OFF always F32;
 * REQUIRE makes hw_translator_create fail (HW_ERR_BACKEND: no fp16 arithmetic here;
 * HW_ERR_INVALID_ARGUMENT: the model has no F16 weights). Same values as headwise::Fp16Compute. */
enum { HW_FP16_AUTO = 0, HW_FP16_OFF = 1, HW_FP16_REQUIRE = 2 };

/* hw_translator_params.worker_wait; same values as headwise::WorkerWait. */
enum { HW_WORKERS_YIELD = 0, HW_WORKERS_SPIN = 1 };

/* What a translator's matrix products compute in. Same values as headwise::MatmulPrecision. */
typedef enum hw_precision { HW_PRECISION_F32 = 0, HW_PRECISION_F16 = 1, HW_PRECISION_INT8 = 2 } hw_precision;

/* When a beam search ends besides beam_size finished hypotheses; the rules are those of
 * headwise::BeamStop (headwise.hpp, "Decoding semantics"), same values. */
typedef enum hw_beam_stop {
  HW_BEAM_STOP_EXHAUSTIVE = 0, /* only when beam_size hypotheses have finished */
  HW_BEAM_STOP_TOP_EOS = 1,    /* also once num_hypotheses have finished and a step's best
                                  candidate is EOS */
  HW_BEAM_STOP_OUTSCORED = 2   /* also once the num_hypotheses-th best finished score is >= the
                                  best live beam's score at its current length */
} hw_beam_stop;

typedef struct hw_search_params {
  int beam_size;        /* default 1 (greedy) */
  int num_hypotheses;   /* default 1 */
  float length_penalty; /* default 1.0 */
  int max_length;       /* default 0 = the translator's max_target_tokens */
  int beam_stop;        /* an hw_beam_stop; default HW_BEAM_STOP_EXHAUSTIVE */
  /* EOS is not chosen before this many generated tokens; default 0 (off); below the resolved
   * max_length (headwise.hpp, "Minimum length"). */
  int min_length;
  /* Random sampling, beam_size 1 only (headwise.hpp, "Sampling"): default 0 (off). top_k,
   * top_p, temperature and seed must keep their defaults without it (HW_ERR_INVALID_ARGUMENT). */
  int sample;
  int top_k;            /* default 0 = every id */
  float top_p;          /* in (0, 1]; default 1 = off */
  float temperature;    /* finite, > 0; default 1 */
  uint64_t seed;        /* default 0; with the source ids it fixes every draw */
} hw_search_params;

/* How a call over many lines forms its batches (headwise.hpp, BatchOptions): within each sort
 * window the lines are ordered by source length in tokens (EOS included; equal lengths keep
 * input order) and cut into batches of at most max_lines lines whose lines x longest source
 * stays within max_tokens. Results always come back in input order. */
typedef struct hw_batch_params {
  int max_lines;      /* default 0 = the translator's max_batch (also the upper bound) */
  int max_tokens;     /* default 0 = no token budget; a longer line forms a batch of its own */
  int sort_by_length; /* default 1; 0 = batches follow input order */
  /* default 0; 1 (text calls only, num_hypotheses 1): each line is cut into sentences
   * (hw_split_sentences), each translated on its own, and the line's translation is theirs
   * joined by the whitespace between them (headwise.hpp, BatchOptions::split_sentences). */
  int split_sentences;
} hw_batch_params;

/* Stable name of a status, e.g. "INVALID_MODEL". Never NULL. */
const char* hw_status_name(hw_status status);
/* Message of the last failed call on this thread ("" if none). Valid until the next call. */
const char* hw_last_error_message(void);
const char* hw_version(void);

hw_load_params hw_load_default_params(void);
hw_translator_params hw_translator_default_params(void);
hw_search_params hw_search_default_params(void);
hw_batch_params hw_batch_default_params(void);

/* params may be NULL for the defaults. */
hw_status hw_model_load(const char* path, const hw_load_params* params, hw_model** out_model);
void hw_model_free(hw_model* model);
/* 0 for NULL. */
int hw_model_vocab_size(const hw_model* model);

/* What a model file holds (headwise-convert inspect shows the same). Every string is owned by
 * the model, valid until hw_model_free, and never NULL ("" when the file does not say). */
typedef struct hw_model_info {
  int d_model;
  int encoder_layers;
  int decoder_layers;
  int encoder_ffn_dim;
  int decoder_ffn_dim;
  int vocab_size;
  int max_position_embeddings;
  int pad_token_id;
  int eos_token_id;
  int unk_token_id;
  int decoder_start_token_id;
  const char* activation;    /* "relu", "swish" or "gelu" */
  /* How the weight matrices are stored: "fp32", "fp16", "int8" (headwise-convert --weights)
   * or "mixed". */
  const char* weight_format;
  int has_tokenizer;         /* 0: only the token-id path (hw_translate_ids) works */
  int format_version;
  size_t num_attention_blocks; /* encoder self 0.., decoder self 0.., decoder cross 0.. */
  uint64_t file_bytes;
  uint64_t weight_bytes;     /* the data segment */
  /* Provenance recorded by the converter. */
  const char* source_checkpoint_sha256;
  const char* source_checkpoint_name;
  const char* converter_version;
  const char* keep_heads_spec; /* the --keep-heads spec that overrode the gates */
  const char* source_dtype;    /* "F32", "F16", "BF16" or "mixed" */
  /* Where the per-head analysis came from; "" when the blocks carry none. */
  const char* analysis_rule;   /* "attnlrp" or "z" */
  const char* analysis_data;   /* e.g. "dev, 500 sentences" */
  const char* analysis_sha256; /* of the analysis.json the converter read */
  /* The vocabulary shortlist (headwise-convert --shortlist); 0 / "" when the file has none. */
  int has_shortlist;
  int shortlist_frequent;      /* pieces every batch may produce */
  int shortlist_sources;       /* source pieces with a list of target pieces */
  int shortlist_longest;       /* entries of the longest list */
  uint64_t shortlist_entries;  /* list entries in all */
  const char* shortlist_description; /* how it was made */
} hw_model_info;

/* Same values as headwise::AttentionKind. */
typedef enum hw_attention_kind {
  HW_ATTENTION_ENCODER_SELF = 0,
  HW_ATTENTION_DECODER_SELF = 1,
  HW_ATTENTION_DECODER_CROSS = 2
} hw_attention_kind;

/* What `headwise-train analyze` found about one source head; NAN = not computed. */
typedef struct hw_head_analysis {
  int source_head;       /* index into the block's source heads */
  float relevance;       /* LRP share of the block's relevance (rule: analysis_rule) */
  float confidence;      /* mean maximum attention weight, EOS excluded */
  float michel;          /* Michel et al. importance, l2-normalised per block */
  size_t num_roles;
  const char* const* roles; /* "positional", "rare-word", "syntactic:<relation>", ... */
} hw_head_analysis;

/* One attention block. Arrays are owned by the model, valid until hw_model_free. */
typedef struct hw_attention_block {
  hw_attention_kind kind;
  int layer;
  const char* name;            /* "model.encoder.layers.3.self_attn", ... */
  int num_heads;               /* heads kept in the file (0 allowed) */
  int original_num_heads;      /* heads of the source checkpoint */
  int head_dim;
  const int32_t* kept_heads;   /* num_heads source-head indices, ascending (NULL when 0) */
  /* One gate log_alpha per source head, or NULL when the source checkpoint had no gates. */
  const float* gate_log_alpha;
  /* One entry per source head in source order (removed heads included), or NULL. */
  const hw_head_analysis* analysis;
} hw_attention_block;

/* Writes the model's info. HW_ERR_INVALID_ARGUMENT for NULL. */
hw_status hw_model_get_info(const hw_model* model, hw_model_info* out_info);
/* Writes block `index` (< num_attention_blocks); HW_ERR_INVALID_ARGUMENT when out of range. */
hw_status hw_model_get_attention_block(const hw_model* model, size_t index,
                                       hw_attention_block* out_block);

/* The embedded tokenizers, as the text path uses them. Thread-safe on a shared model.
 * hw_model_encode: `length` bytes of UTF-8 (NUL bytes allowed; they count as spaces like other
 * control characters) -> encoder input ids, EOS included (what hw_translate_ids takes). Writes
 * min(count, capacity) ids to out_ids (which may be NULL when capacity is 0) and the full count
 * to *out_length: call again with a larger buffer when *out_length > capacity.
 * Errors: HW_ERR_INVALID_UTF8 (naming the byte offset), HW_ERR_TOKENIZER (no tokenizer). */
hw_status hw_model_encode(const hw_model* model, const char* text, size_t length,
                          int32_t* out_ids, size_t capacity, size_t* out_length);
/* Target text -> the ids of a target prefix (headwise::Model::EncodeTarget: target pieces, no
 * EOS; blank text: none), written as hw_model_encode writes. Errors: HW_ERR_INVALID_UTF8,
 * HW_ERR_TOKENIZER (no tokenizer, or a piece the vocabulary lacks, named). */
hw_status hw_model_encode_target(const hw_model* model, const char* text, size_t length,
                                 int32_t* out_ids, size_t capacity, size_t* out_length);
/* ids -> target text (pad, EOS and unk skipped). Writes at most capacity - 1 bytes and a NUL
 * (nothing when capacity is 0) and the full byte length, NUL excluded, to *out_length: call
 * again with capacity > *out_length when the text did not fit.
 * Errors: HW_ERR_INVALID_ARGUMENT (an id outside the vocabulary), HW_ERR_TOKENIZER. */
hw_status hw_model_decode(const hw_model* model, const int32_t* ids, size_t n, char* out_text,
                          size_t capacity, size_t* out_length);

/* The sentences of `length` bytes of UTF-8 text, by the rule of headwise::SplitSentences
 * (headwise.hpp): writes min(count, capacity) sentences as byte offsets, begin then end (without
 * surrounding whitespace), to out_spans (2 x capacity values; may be NULL when capacity is 0)
 * and the count to *out_count: call again with a larger buffer when *out_count > capacity.
 * Thread-safe. Errors: HW_ERR_INVALID_UTF8 (naming the byte offset), HW_ERR_INVALID_ARGUMENT. */
hw_status hw_split_sentences(const char* text, size_t length, size_t* out_spans, size_t capacity,
                             size_t* out_count);

hw_status hw_translator_create(const hw_model* model, const hw_translator_params* params,
                               hw_translator** out_translator);
void hw_translator_free(hw_translator* translator);
/* HW_PRECISION_F32 for NULL. */
hw_precision hw_translator_precision(const hw_translator* translator);
/* "f32", "f16" or "int8"; never NULL. */
const char* hw_precision_name(hw_precision precision);
/* One line on why the translator computes in that precision; "" for NULL. Owned by the
 * translator. */
const char* hw_translator_precision_note(const hw_translator* translator);
/* The kernel each kind of matrix product runs, e.g. "int8: neon-dotprod" (see
 * headwise::Translator::kernel_paths in headwise.hpp); "" for NULL. Owned by the translator. */
const char* hw_translator_kernel_paths(const hw_translator* translator);
/* 1 when the translator computes the output layer over the model's shortlist (the model has
 * one and use_shortlist was set); 0 otherwise and for NULL. */
int hw_translator_uses_shortlist(const hw_translator* translator);

/* Text path: translates n UTF-8 lines. *out_result is owned by the caller (hw_result_free).
 * Any failing line fails the whole call (headwise.hpp, Translator::Translate). */
hw_status hw_translate(hw_translator* translator, const char* const* texts, size_t n,
                       const hw_search_params* params, hw_result** out_result);
/* Text path with each line succeeding or failing on its own, as headwise-translate treats its
 * input (headwise.hpp, Translator::TranslateEach): a line that is invalid UTF-8, longer than
 * max_source_tokens, or in a batch the runtime failed to translate has its own status
 * (hw_result_status, hw_result_error_message) and no hypotheses; the other lines are
 * translated. lengths: NULL when every text is NUL-terminated, else the byte length of each
 * text (NUL bytes then count as spaces like other control characters).
 * Returns an error (and no result) only for what no line can change: NULL arguments,
 * search params outside the translator's limits (HW_ERR_INVALID_ARGUMENT), a model without
 * tokenizer (HW_ERR_TOKENIZER), HW_ERR_OUT_OF_MEMORY. */
hw_status hw_translate_each(hw_translator* translator, const char* const* texts,
                            const size_t* lengths, size_t n, const hw_search_params* params,
                            hw_result** out_result);
/* hw_translate_each with batch params (NULL = defaults, which hw_translate_each uses too);
 * batch params outside the limits (max_lines < 0 or over max_batch, max_tokens < 0) are
 * HW_ERR_INVALID_ARGUMENT for the whole call. */
hw_status hw_translate_each_batched(hw_translator* translator, const char* const* texts,
                                    const size_t* lengths, size_t n,
                                    const hw_search_params* params,
                                    const hw_batch_params* batch, hw_result** out_result);
/* hw_translate_each_batched with target prefixes (headwise.hpp, "Target prefix" and
 * Translator::TranslateEach): prefixes[i] is the UTF-8 start line i's translation must have
 * (NULL or blank: none; prefix_lengths as `lengths`, NULL when every prefix is NUL-terminated).
 * prefixes NULL: none at all. A line's prefix errors are its own (HW_ERR_INVALID_UTF8 or
 * HW_ERR_TOKENIZER naming "target_prefixes[i]", HW_ERR_INPUT_TOO_LONG beyond the maximum
 * length, HW_ERR_INVALID_ARGUMENT for a blank line with a prefix); prefixes with
 * batch->split_sentences fail the call (HW_ERR_INVALID_ARGUMENT). */
hw_status hw_translate_each_prefixed(hw_translator* translator, const char* const* texts,
                                     const size_t* lengths, size_t n, const char* const* prefixes,
                                     const size_t* prefix_lengths,
                                     const hw_search_params* params, const hw_batch_params* batch,
                                     hw_result** out_result);
size_t hw_result_num_sentences(const hw_result* result);
/* 0 for a failed line. */
size_t hw_result_num_hypotheses(const hw_result* result, size_t sentence);
/* NULL when out of range. */
const char* hw_result_text(const hw_result* result, size_t sentence, size_t k);
/* NAN when out of range. */
float hw_result_score(const hw_result* result, size_t sentence, size_t k);
/* The line's status: HW_OK, or why it failed (hw_translate_each); HW_ERR_INVALID_ARGUMENT when
 * out of range. */
hw_status hw_result_status(const hw_result* result, size_t sentence);
/* The failed line's message, e.g. "texts[3]: invalid UTF-8 at byte 5"; "" for a translated
 * line or out of range. Owned by the result. */
const char* hw_result_error_message(const hw_result* result, size_t sentence);

/* One hypothesis (headwise.hpp, TextHypothesis / HypothesisView). */
typedef struct hw_hypothesis {
  const char* text;     /* NUL-terminated; NULL on the token path (hw_translator_get_hypothesis) */
  const int32_t* ids;   /* generated ids, decoder start and final EOS excluded */
  size_t length;        /* number of ids */
  float score;          /* sum of log-probabilities / length^length_penalty */
  int finished;         /* 1: ended with EOS; 0: cut at the maximum length */
} hw_hypothesis;
/* Writes hypothesis k of a result's sentence (pointers owned by the result);
 * HW_ERR_INVALID_ARGUMENT when out of range. */
hw_status hw_result_get_hypothesis(const hw_result* result, size_t sentence, size_t k,
                                   hw_hypothesis* out_hypothesis);
void hw_result_free(hw_result* result);

/* Token path, no heap allocation: ids[i] has lengths[i] ids (encoder input, EOS included).
 * Results stay in the translator until its next call. */
hw_status hw_translate_ids(hw_translator* translator, const int32_t* const* ids,
                           const size_t* lengths, size_t n, const hw_search_params* params);
/* hw_translate_ids with target prefixes: prefix_ids[i] has prefix_lengths[i] target ids that
 * translation i must begin with (headwise.hpp, "Target prefix"; length 0: none). Both arrays
 * NULL: no prefixes (= hw_translate_ids). Errors besides hw_translate_ids's:
 * HW_ERR_INVALID_ARGUMENT (one array NULL, a prefix id outside the vocabulary, PAD or EOS),
 * HW_ERR_INPUT_TOO_LONG (a prefix longer than the maximum length). No heap allocation. */
hw_status hw_translate_ids_prefixed(hw_translator* translator, const int32_t* const* ids,
                                    const size_t* lengths, size_t n,
                                    const int32_t* const* prefix_ids,
                                    const size_t* prefix_lengths, const hw_search_params* params);
/* Token path over many sources, each succeeding or failing on its own, no heap allocation
 * (a failing source's message is built when hw_translator_line_error_message asks for it;
 * hw_translator_line_status does not allocate): n <= the translator's sort window
 * (hw_translator_sort_window; HW_ERR_BATCH_TOO_LARGE otherwise) sources are sorted by length,
 * cut into batches (batch may be NULL: defaults) and translated; afterwards
 * hw_translator_num_hypotheses / hw_translator_get_hypothesis / hw_translator_line_status
 * answer for source i in input order until the translator's next call. A source that is
 * empty, longer than max_source_tokens (HW_ERR_INPUT_TOO_LONG) or holds an id outside the
 * vocabulary (HW_ERR_INVALID_ARGUMENT) fails alone, as does each source of a batch the runtime
 * failed to translate. Whole-call errors: NULL arguments, search or batch params outside the
 * limits (HW_ERR_INVALID_ARGUMENT), HW_ERR_BATCH_TOO_LARGE. */
hw_status hw_translate_ids_each(hw_translator* translator, const int32_t* const* ids,
                                const size_t* lengths, size_t n, const hw_search_params* params,
                                const hw_batch_params* batch);
/* hw_translate_ids_each with target prefixes as hw_translate_ids_prefixed takes them; a
 * source whose prefix is bad fails alone (hw_translator_line_status). */
hw_status hw_translate_ids_each_prefixed(hw_translator* translator, const int32_t* const* ids,
                                         const size_t* lengths, size_t n,
                                         const int32_t* const* prefix_ids,
                                         const size_t* prefix_lengths,
                                         const hw_search_params* params,
                                         const hw_batch_params* batch);
/* Source `sentence` of the last hw_translate_ids_each: HW_OK, or why it failed; HW_OK when out
 * of range or after any other call. */
hw_status hw_translator_line_status(const hw_translator* translator, size_t sentence);
/* Its message, e.g. "301 tokens exceed TranslatorLimits.max_source_tokens 256" (the message
 * does not name the source); "" for a translated source. Owned by the translator, valid until
 * its next call. */
const char* hw_translator_line_error_message(const hw_translator* translator, size_t sentence);
/* The sort window in use (hw_translator_params.sort_window, 0 resolved); 0 for NULL. */
int hw_translator_sort_window(const hw_translator* translator);
/* The batch lanes in use (hw_translator_params.batch_lanes, 0 resolved); 0 for NULL. */
int hw_translator_batch_lanes(const hw_translator* translator);
/* 0 unless the translator's last call was a successful hw_translate_ids or
 * hw_translate_ids_each (hw_translate replaces the translator's results). */
size_t hw_translator_num_hypotheses(const hw_translator* translator, size_t sentence);
/* Writes the hypothesis' ids pointer, length and score; returns HW_ERR_INVALID_ARGUMENT when
 * out of range. */
hw_status hw_translator_hypothesis(const hw_translator* translator, size_t sentence, size_t k,
                                   const int32_t** out_ids, size_t* out_length, float* out_score);
/* The same hypothesis with its `finished` flag (text is NULL); ids valid until the
 * translator's next call. */
hw_status hw_translator_get_hypothesis(const hw_translator* translator, size_t sentence, size_t k,
                                       hw_hypothesis* out_hypothesis);

#ifdef __cplusplus
}
#endif

#endif /* HEADWISE_HEADWISE_H_ */
