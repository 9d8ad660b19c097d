#!/usr/bin/env bash
# Sets everything up and runs the main job on the model shipped in the repo: builds headwise,
# converts the shipped gated checkpoint (models/en-de/checkpoint: closed heads are stripped,
# weights stored int8, with the vocabulary shortlist models/en-de/shortlist.tsv when there is
# one, as shipped: scripts/ship-en-de.sh SHORTLIST), checks that the result is byte-identical to the committed
# models/en-de/model.hwm, and translates a few sentences with models/en-de/model.hwm.
# Extra arguments are passed to headwise-translate (e.g. --beam 4 --nbest 2 --json).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target headwise-convert headwise-translate -- -j"$(nproc)"
BIN=build/default
mkdir -p build/models
shortlist=()  # none where a re-ship with SHORTLIST=0 removed it (scripts/ship-en-de.sh)
[[ -f models/en-de/shortlist.tsv ]] && shortlist=(--shortlist models/en-de/shortlist.tsv)
"$BIN/converter/headwise-convert" models/en-de/checkpoint -o build/models/en-de.hwm \
  --weights int8 --force "${shortlist[@]}"
if cmp -s build/models/en-de.hwm models/en-de/model.hwm; then
  echo "demo: the conversion reproduces models/en-de/model.hwm byte for byte"
else
  echo "demo: build/models/en-de.hwm differs from models/en-de/model.hwm" >&2
  exit 1
fi
printf '%s\n' "Open the file." "The file could not be found." "Invalid user name." \
  "Unable to connect to the server." "Do you want to save the changes?" |
  "$BIN/examples/translate/headwise-translate" -m models/en-de/model.hwm "$@"
