/* The C compile test: this file is C11, includes only the public C header, and uses the whole
 * C API the way a C program would.
 *
 *   c_compile_test                 error paths only (no model needed)
 *   c_compile_test MODEL.hwm EOS   also loads MODEL.hwm, reads its info, and translates text
 *                                  (whole calls and line by line) and token ids (EOS: the
 *                                  model's eos id, ending the id sequences)
 * Exit status 0 when every check passed; each failed check is printed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headwise/headwise.h"

static int failures = 0;

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__,   \
              __LINE__, #cond, hw_last_error_message());                        \
      ++failures;                                                               \
    }                                                                           \
  } while (0)

static void check_error_paths(void) {
  hw_model* model = NULL;
  hw_translator* translator = NULL;
  hw_result* result = NULL;
  hw_status s;

  CHECK(strcmp(hw_status_name(HW_OK), "OK") == 0);
  CHECK(strcmp(hw_status_name(HW_ERR_IO), "IO_ERROR") == 0);
  CHECK(strcmp(hw_status_name((hw_status)12345), "UNKNOWN") == 0);
  CHECK(hw_version() != NULL && hw_version()[0] != '\0');
  CHECK(strcmp(hw_last_error_message(), "") == 0);

  s = hw_model_load("/nonexistent/headwise/missing.hwm", NULL, &model);
  CHECK(s == HW_ERR_IO);
  CHECK(model == NULL);
  CHECK(strstr(hw_last_error_message(), "missing.hwm") != NULL);

  s = hw_model_load(NULL, NULL, &model);
  CHECK(s == HW_ERR_INVALID_ARGUMENT);
  CHECK(hw_last_error_message()[0] != '\0');

  s = hw_translator_create(NULL, NULL, &translator);
  CHECK(s == HW_ERR_INVALID_ARGUMENT);
  CHECK(translator == NULL);

  s = hw_translate(NULL, NULL, 0, NULL, &result);
  CHECK(s == HW_ERR_INVALID_ARGUMENT);
  CHECK(result == NULL);
  s = hw_translate_each_batched(NULL, NULL, NULL, 0, NULL, NULL, &result);
  CHECK(s == HW_ERR_INVALID_ARGUMENT);
  CHECK(hw_translate_ids_each(NULL, NULL, NULL, 0, NULL, NULL) == HW_ERR_INVALID_ARGUMENT);
  CHECK(hw_translator_line_status(NULL, 0) == HW_OK);
  CHECK(strcmp(hw_translator_line_error_message(NULL, 0), "") == 0);
  CHECK(hw_translator_sort_window(NULL) == 0);
  CHECK(hw_translator_batch_lanes(NULL) == 0);

  CHECK(hw_result_num_sentences(NULL) == 0);
  CHECK(hw_result_text(NULL, 0, 0) == NULL);
  CHECK(isnan(hw_result_score(NULL, 0, 0)));
  hw_result_free(NULL);
  hw_translator_free(NULL);
  hw_model_free(NULL);

  {
    hw_load_params lp = hw_load_default_params();
    hw_translator_params tp = hw_translator_default_params();
    hw_search_params sp = hw_search_default_params();
    hw_batch_params bp = hw_batch_default_params();
    CHECK(lp.verify_checksum == 1);
    CHECK(tp.sort_window == 0);
    CHECK(bp.max_lines == 0 && bp.max_tokens == 0 && bp.sort_by_length == 1);
    CHECK(tp.max_batch == 8 && tp.max_source_tokens == 256 && tp.max_target_tokens == 256);
    CHECK(tp.max_beam == 4 && tp.num_threads == 1 && tp.max_memory_bytes == 0);
    CHECK(sp.beam_size == 1 && sp.num_hypotheses == 1 && sp.max_length == 0 &&
          sp.beam_stop == HW_BEAM_STOP_EXHAUSTIVE);
    CHECK(sp.length_penalty == 1.0f);
    CHECK(sp.min_length == 0 && sp.sample == 0 && sp.top_k == 0 && sp.top_p == 1.0f &&
          sp.temperature == 1.0f && sp.seed == 0);
  }
}

static void check_model(const char* path, int32_t eos) {
  hw_model* model = NULL;
  hw_translator* translator = NULL;
  hw_result* result = NULL;
  hw_load_params lp = hw_load_default_params();
  hw_translator_params tp = hw_translator_default_params();
  hw_search_params sp = hw_search_default_params();
  const char* texts[] = {"Open the file.", "", "The cat sat on the mat."};
  size_t i;

  CHECK(hw_model_load(path, &lp, &model) == HW_OK);
  if (model == NULL) return;
  CHECK(hw_model_vocab_size(model) > 0);

  tp.max_batch = 2;
  tp.max_source_tokens = 64;
  tp.max_target_tokens = 32;
  tp.max_beam = 2;
  tp.fp16_compute = HW_FP16_AUTO;
  tp.worker_wait = HW_WORKERS_YIELD;
  CHECK(hw_translator_create(model, &tp, &translator) == HW_OK);
  hw_model_free(model); /* the translator keeps it alive */
  if (translator == NULL) return;
  CHECK(strlen(hw_precision_name(hw_translator_precision(translator))) > 0);
  CHECK(hw_translator_precision_note(translator) != NULL);
  CHECK(strlen(hw_translator_kernel_paths(translator)) > 0);

  sp.beam_size = 2;
  sp.num_hypotheses = 2;
  CHECK(hw_translate(translator, texts, 3, &sp, &result) == HW_OK);
  if (result != NULL) {
    CHECK(hw_result_num_sentences(result) == 3);
    for (i = 0; i < 3; ++i) {
      size_t k;
      for (k = 0; k < hw_result_num_hypotheses(result, i); ++k) {
        const char* text = hw_result_text(result, i, k);
        CHECK(text != NULL);
        printf("%u.%u\t%.4f\t%s\n", (unsigned)i, (unsigned)k, hw_result_score(result, i, k),
               text ? text : "(null)");
      }
    }
    CHECK(strcmp(hw_result_text(result, 1, 0), "") == 0);
    hw_result_free(result);
  }

  {
    const char* bad[] = {"caf\xC3"};
    result = NULL;
    CHECK(hw_translate(translator, bad, 1, NULL, &result) == HW_ERR_INVALID_UTF8);
    CHECK(result == NULL);
    CHECK(strstr(hw_last_error_message(), "byte offset 3") != NULL);
  }

  {
    const int32_t a[4] = {4, 5, 6, 0};
    const int32_t b[2] = {7, 0};
    const int32_t* ids[3];
    size_t lengths[3] = {4, 2, 2};
    const int32_t* out = NULL;
    size_t len = 0;
    float score = 0.0f;
    int32_t a_eos[4];
    int32_t b_eos[2];
    memcpy(a_eos, a, sizeof a);
    memcpy(b_eos, b, sizeof b);
    a_eos[3] = eos;
    b_eos[1] = eos;
    ids[0] = a_eos;
    ids[1] = b_eos;
    ids[2] = b_eos;
    CHECK(hw_translate_ids(translator, ids, lengths, 2, &sp) == HW_OK);
    CHECK(hw_translator_num_hypotheses(translator, 0) == 2);
    CHECK(hw_translator_hypothesis(translator, 1, 1, &out, &len, &score) == HW_OK);
    CHECK(len == 0 || out != NULL);
    CHECK(hw_translator_hypothesis(translator, 2, 0, &out, &len, &score) == HW_ERR_INVALID_ARGUMENT);
    CHECK(hw_translate_ids(translator, ids, lengths, 3, &sp) == HW_ERR_BATCH_TOO_LARGE);
    {
      /* Three sources, sorted and batched by two, each on its own; one too long. */
      hw_batch_params bp = hw_batch_default_params();
      size_t each_lengths[3] = {4, 2, 65}; /* 65 > max_source_tokens: rejected before its ids are read */
      bp.max_tokens = 8;
      CHECK(hw_translator_sort_window(translator) == 32); /* 16 x max_batch */
      CHECK(hw_translate_ids_each(translator, ids, each_lengths, 3, &sp, &bp) == HW_OK);
      CHECK(hw_translator_num_hypotheses(translator, 0) == 2);
      CHECK(hw_translator_line_status(translator, 1) == HW_OK);
      CHECK(hw_translator_line_status(translator, 2) == HW_ERR_INPUT_TOO_LONG);
      CHECK(strstr(hw_translator_line_error_message(translator, 2), "65 tokens") != NULL);
      CHECK(hw_translator_num_hypotheses(translator, 2) == 0);
      bp.max_lines = 3; /* over max_batch */
      CHECK(hw_translate_ids_each(translator, ids, each_lengths, 3, &sp, &bp) == HW_ERR_INVALID_ARGUMENT);
    }
    sp.beam_stop = HW_BEAM_STOP_TOP_EOS;
    CHECK(hw_translate_ids(translator, ids, lengths, 1, &sp) == HW_OK);
    sp.beam_stop = 3; /* no such rule */
    CHECK(hw_translate_ids(translator, ids, lengths, 1, &sp) == HW_ERR_INVALID_ARGUMENT);
    sp.beam_stop = HW_BEAM_STOP_EXHAUSTIVE;
    sp.beam_size = 1;
    sp.num_hypotheses = 1;
    sp.sample = 1; /* sampling, from C: a 64-bit seed, top_k, top_p, temperature, min_length */
    sp.seed = UINT64_C(18446744073709551615);
    sp.top_k = 5;
    sp.top_p = 0.9f;
    sp.temperature = 0.8f;
    sp.min_length = 2;
    CHECK(hw_translate_ids(translator, ids, lengths, 1, &sp) == HW_OK);
    CHECK(hw_translator_num_hypotheses(translator, 0) == 1);
    sp.top_p = 0.0f; /* outside (0, 1] */
    CHECK(hw_translate_ids(translator, ids, lengths, 1, &sp) == HW_ERR_INVALID_ARGUMENT);
    sp = hw_search_default_params();
    sp.beam_size = 3; /* over max_beam */
    sp.num_hypotheses = 1;
    CHECK(hw_translate_ids(translator, ids, lengths, 1, &sp) == HW_ERR_INVALID_ARGUMENT);
  }
  hw_translator_free(translator);
}

/* Model info, the tokenizer and per-line results. */
static void check_info_and_lines(const char* path) {
  hw_model* model = NULL;
  hw_translator* translator = NULL;
  hw_result* result = NULL;
  hw_model_info info;
  hw_attention_block block;
  hw_hypothesis h;
  int32_t ids[64];
  char text[256];
  size_t n = 0, i;
  const char* lines[] = {"Open the file.", "caf\xC3", "Read."};
  const size_t lengths[] = {14, 4, 5};

  CHECK(hw_model_load(path, NULL, &model) == HW_OK);
  if (model == NULL) return;
  CHECK(hw_model_get_info(model, &info) == HW_OK);
  CHECK(info.vocab_size == hw_model_vocab_size(model));
  CHECK(info.has_tokenizer == 1);
  CHECK(strcmp(info.weight_format, "fp32") == 0);
  CHECK(info.activation != NULL && info.analysis_rule != NULL && info.source_dtype != NULL);
  CHECK(info.num_attention_blocks == (size_t)(info.encoder_layers + 2 * info.decoder_layers));
  for (i = 0; i < info.num_attention_blocks; ++i) {
    CHECK(hw_model_get_attention_block(model, i, &block) == HW_OK);
    CHECK(block.num_heads <= block.original_num_heads && block.name != NULL);
    CHECK(block.num_heads == 0 || block.kept_heads != NULL);
  }
  CHECK(block.kind == HW_ATTENTION_DECODER_CROSS);
  CHECK(hw_model_get_attention_block(model, i, &block) == HW_ERR_INVALID_ARGUMENT);

  CHECK(hw_model_encode(model, "Open the file.", 14, ids, 64, &n) == HW_OK);
  CHECK(n > 1 && n <= 64 && ids[n - 1] == info.eos_token_id);
  CHECK(hw_model_decode(model, ids, n, text, sizeof text, &n) == HW_OK);
  CHECK(n == strlen(text));

  CHECK(hw_translator_create(model, NULL, &translator) == HW_OK);
  if (translator != NULL) {
    CHECK(hw_translate_each(translator, lines, lengths, 3, NULL, &result) == HW_OK);
    if (result != NULL) {
      CHECK(hw_result_status(result, 0) == HW_OK && hw_result_status(result, 2) == HW_OK);
      CHECK(hw_result_status(result, 1) == HW_ERR_INVALID_UTF8);
      CHECK(strstr(hw_result_error_message(result, 1), "texts[1]") != NULL);
      CHECK(hw_result_num_hypotheses(result, 1) == 0);
      CHECK(hw_result_get_hypothesis(result, 0, 0, &h) == HW_OK);
      CHECK(h.text != NULL && (h.length == 0 || h.ids != NULL) && (h.finished == 0 || h.finished == 1));
      hw_result_free(result);
    }
    {
      hw_batch_params bp = hw_batch_default_params();
      bp.max_tokens = 16;
      bp.sort_by_length = 0;
      result = NULL;
      CHECK(hw_translate_each_batched(translator, lines, lengths, 3, NULL, &bp, &result) == HW_OK);
      if (result != NULL) {
        CHECK(hw_result_status(result, 1) == HW_ERR_INVALID_UTF8);
        CHECK(hw_result_num_hypotheses(result, 0) == 1 && hw_result_num_hypotheses(result, 2) == 1);
        hw_result_free(result);
      }
    }
    n = 0;
    CHECK(hw_model_encode(model, "Read.", 5, ids, 64, &n) == HW_OK);
    {
      const int32_t* sources[1];
      sources[0] = ids;
      CHECK(hw_translate_ids(translator, sources, &n, 1, NULL) == HW_OK);
    }
    CHECK(hw_translator_get_hypothesis(translator, 0, 0, &h) == HW_OK);
    CHECK(h.text == NULL);
    hw_translator_free(translator);
  }
  hw_model_free(model);
}

int main(int argc, char** argv) {
  check_error_paths();
  if (argc == 3) {
    check_model(argv[1], (int32_t)atoi(argv[2]));
    check_info_and_lines(argv[1]);
  } else if (argc != 1) {
    fprintf(stderr, "usage: c_compile_test [MODEL.hwm EOS_ID]\n");
    return 2;
  }
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c_compile_test: all checks passed\n");
  return 0;
}
