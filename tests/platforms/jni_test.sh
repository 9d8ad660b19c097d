#!/usr/bin/env bash
# Runs TranslatorTest on the host JVM against libheadwise_jni, with expected lines made by
# headwise-translate from the same model and inputs (ASCII, Latin-1 letters, a character
# outside the BMP, an empty line).
# Usage: jni_test.sh JAVA CLASSPATH JNI_LIBRARY_DIR TRANSLATE MODEL NO_TOKENIZER_MODEL
set -euo pipefail
java=$1 classpath=$2 libdir=$3 translate=$4 model=$5 no_tokenizer=$6
work=$(mktemp -d "${TMPDIR:-/tmp}/hw_jni_XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '%s\n' "Hello world." "Grüße aus Köln, the file is 😀 open." "" "Close the window." \
  >"$work/inputs.txt"
"$translate" -m "$model" <"$work/inputs.txt" >"$work/expected.txt"
exec "$java" -Xcheck:jni -Djava.library.path="$libdir" -cp "$classpath" TranslatorTest \
  "$model" "$no_tokenizer" "$work/inputs.txt" "$work/expected.txt"
