#!/usr/bin/env bash
# Fails if any build file or compile command asks for the build machine's CPU
# (-march, -mcpu or -mtune set to "native"): the binaries must run on other machines
# (Raspberry Pi, phones). Usage: no_march_native_test.sh SOURCE_DIR COMPILE_COMMANDS_JSON
set -u
src=$1 commands=$2
pattern='-m(arch|cpu|tune)=nat''ive'   # split so this file does not match itself
status=0
cd "$src" || exit 1
hits=$(git ls-files -co --exclude-standard -- ':!*.md' ':!work/*' 2>/dev/null |
       while IFS= read -r f; do [[ -f "$f" ]] && printf '%s\0' "$f"; done |
       xargs -0 grep -InE -- "$pattern" 2>/dev/null)
if [[ -n "$hits" ]]; then
  echo "FAIL: native CPU flags in the tree:"; echo "$hits"; status=1
fi
if [[ ! -s "$commands" ]]; then
  echo "FAIL: no compile commands at $commands"; status=1
elif grep -qE -- "$pattern" "$commands"; then
  echo "FAIL: native CPU flags in $commands:"; grep -oE -- "$pattern" "$commands" | sort | uniq -c
  status=1
fi
((status == 0)) && echo "ok: no native CPU flags in $(git ls-files | wc -l) tracked files or $commands"
exit $status
