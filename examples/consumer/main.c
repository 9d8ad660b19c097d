/* headwise_consumer MODEL TEXT...: translates each TEXT with the C API, one line each. */
#include <stdio.h>

#include <headwise/headwise.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL TEXT...\n", argv[0]);
    return 2;
  }
  hw_model* model = NULL;
  if (hw_model_load(argv[1], NULL, &model) != HW_OK) {
    fprintf(stderr, "%s\n", hw_last_error_message());
    return 1;
  }
  hw_translator_params tp = hw_translator_default_params();
  hw_translator* translator = NULL;
  int rc = 0;
  if (hw_translator_create(model, &tp, &translator) != HW_OK) {
    fprintf(stderr, "%s\n", hw_last_error_message());
    rc = 1;
  }
  hw_search_params sp = hw_search_default_params();
  for (int i = 2; i < argc && rc == 0; ++i) {
    const char* texts[] = {argv[i]};
    hw_result* result = NULL;
    if (hw_translate(translator, texts, 1, &sp, &result) != HW_OK) {
      fprintf(stderr, "%s\n", hw_last_error_message());
      rc = 1;
      break;
    }
    printf("%s\n", hw_result_text(result, 0, 0));
    hw_result_free(result);
  }
  hw_translator_free(translator);
  hw_model_free(model);
  return rc;
}
