#!/usr/bin/env bash
# Sets everything up and runs the main job on the model shipped in the repo: builds headwise,
# converts the shipped gated checkpoint (models/en-de/checkpoint) into a .hwm file, and
# translates a few sentences with it, then with the committed models/en-de/model.hwm.
# Extra arguments are passed to headwise-translate (e.g. --beam 4 --nbest 2 --json).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target headwise-convert headwise-translate -- -j"$(nproc)"
BIN=build/default
mkdir -p build/models
"$BIN/converter/headwise-convert" models/en-de/checkpoint -o build/models/en-de.hwm --force
printf '%s\n' "Open the file." "The file could not be found." "Do you want to save the changes?" \
  "Press any key to continue." |
  "$BIN/examples/translate/headwise-translate" -m build/models/en-de.hwm "$@"
