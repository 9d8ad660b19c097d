/* hw_c_nbest MODEL BEAM NBEST < lines: the C API's own translation of stdin's lines (one
 * hw_translate call, default limits with max_beam = BEAM), printed one hypothesis per output
 * line as "LINE K SCORE ID ID ...", SCORE as a C99 hex float (exact). test_cli_parity.py
 * compares the Python module's n-best scores with these. Exit 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headwise/headwise.h"

static int fail(const char* what) {
  fprintf(stderr, "hw_c_nbest: %s: %s\n", what, hw_last_error_message());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: hw_c_nbest MODEL BEAM NBEST < lines\n");
    return 2;
  }
  size_t n = 0, cap = 0;
  char** lines = NULL;
  char buf[1 << 16];
  while (fgets(buf, sizeof buf, stdin) != NULL) {
    size_t len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      char** grown = realloc(lines, cap * sizeof *lines);
      if (grown == NULL) return 1;
      lines = grown;
    }
    lines[n] = malloc(len + 1);
    if (lines[n] == NULL) return 1;
    memcpy(lines[n++], buf, len + 1);
  }
  hw_model* model = NULL;
  if (hw_model_load(argv[1], NULL, &model) != HW_OK) return fail("load");
  hw_translator_params tp = hw_translator_default_params();
  tp.max_beam = atoi(argv[2]);
  hw_translator* tr = NULL;
  if (hw_translator_create(model, &tp, &tr) != HW_OK) return fail("create");
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = atoi(argv[2]);
  sp.num_hypotheses = atoi(argv[3]);
  hw_result* res = NULL;
  if (hw_translate(tr, (const char* const*)lines, n, &sp, &res) != HW_OK) return fail("translate");
  for (size_t i = 0; i < hw_result_num_sentences(res); ++i) {
    for (size_t k = 0; k < hw_result_num_hypotheses(res, i); ++k) {
      hw_hypothesis h;
      if (hw_result_get_hypothesis(res, i, k, &h) != HW_OK) return fail("hypothesis");
      printf("%zu %zu %a", i, k, (double)h.score);
      for (size_t j = 0; j < h.length; ++j) printf(" %d", (int)h.ids[j]);
      printf("\n");
    }
  }
  hw_result_free(res);
  hw_translator_free(tr);
  hw_model_free(model);
  for (size_t i = 0; i < n; ++i) free(lines[i]);
  free(lines);
  return 0;
}
