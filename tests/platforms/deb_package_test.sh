#!/usr/bin/env bash
# The .deb (CPack): builds it from this build tree, checks dpkg-deb --info (name,
# architecture, Depends) and --contents, unpacks it into a scratch root (dpkg -x), checks
# every ELF file is for the target machine and that each of its DT_NEEDED libraries is either
# in the package or provided by a package named in Depends, then runs the unpacked
# headwise-translate (under HW_EMULATOR in cross builds) and compares its output with the build
# tree's.
# Usage: deb_package_test.sh BUILD_DIR MODEL TRANSLATE_COMMAND
# Environment: HW_DEB_ARCH (arm64|armhf|amd64), HW_TRIPLET, HW_ELF_MACHINE (readelf's
#   "Machine:" text), HW_SHIPPED_MODELS (count of models/en-de/*.hwm), and in cross builds
#   HW_EMULATOR and HW_SYSROOT_CACHE (the .debs platforms/sysroot.sh unpacked).
set -euo pipefail
build=$1 model=$2 translate=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/hw_deb_XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" >"$work/cpack.log" ||
  { cat "$work/cpack.log"; fail "cpack"; }
debs=("$work"/pkg/headwise_*_"$HW_DEB_ARCH".deb)
[[ -f "${debs[0]}" ]] || fail "no headwise_*_$HW_DEB_ARCH.deb in $(ls "$work/pkg")"
deb=${debs[0]}
echo "ok: built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

[[ "$(dpkg-deb -f "$deb" Package)" == headwise ]] || fail "Package is not headwise"
[[ "$(dpkg-deb -f "$deb" Architecture)" == "$HW_DEB_ARCH" ]] || fail "Architecture is not $HW_DEB_ARCH"
depends=$(dpkg-deb -f "$deb" Depends)
dep_names=$(tr ',' '\n' <<<"$depends" | sed -e 's/(.*)//' -e 's/[[:space:]]//g' | sed '/^$/d')
for p in libc6 libstdc++6 libxnnpack0 libpthreadpool0 libcpuinfo0 libsentencepiece0; do
  grep -qx "$p" <<<"$dep_names" || fail "Depends lacks $p: $depends"
done
echo "ok: dpkg-deb --info: headwise, $HW_DEB_ARCH, Depends: $depends"

dpkg-deb --contents "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$work/contents"
expect=(/usr/bin/headwise-translate /usr/bin/headwise-convert /usr/include/headwise/headwise.h
        /usr/include/headwise/headwise.hpp /usr/lib/$HW_TRIPLET/cmake/headwise/headwiseConfig.cmake
        /usr/lib/$HW_TRIPLET/cmake/headwise/headwiseConfigVersion.cmake)
for f in "${expect[@]}"; do grep -qx -- "$f" "$work/contents" || fail "the package lacks $f"; done
grep -qE "^/usr/lib/$HW_TRIPLET/libheadwise\.(so\.[0-9.]+|a)$" "$work/contents" ||
  fail "the package lacks libheadwise in /usr/lib/$HW_TRIPLET"
models=$(grep -c '^/usr/share/headwise/models/en-de/.*\.hwm$' "$work/contents" || true)
[[ "$models" == "${HW_SHIPPED_MODELS:-0}" ]] ||
  fail "$models shipped models in the package, expected ${HW_SHIPPED_MODELS:-0}"
echo "ok: dpkg-deb --contents: $(wc -l <"$work/contents") entries, $models shipped models"

root="$work/root"
dpkg -x "$deb" "$root"
# soname -> Debian package, from the target architecture's packages (cross: "NAME PACKAGE"
# lines listed once from the sysroot's .debs).
if [[ -n "${HW_SYSROOT_CACHE:-}" ]]; then
  for d in "$HW_SYSROOT_CACHE"/*.deb; do
    pkg=$(dpkg-deb -f "$d" Package)
    dpkg-deb -c "$d" | awk -v pkg="$pkg" '{ p = $6; sub(".*/", "", p); print p, pkg }'
  done >"$work/providers"
fi
provider() {
  if [[ -n "${HW_SYSROOT_CACHE:-}" ]]; then
    awk -v n="$1" '$1 == n { print $2; exit }' "$work/providers"
  else
    # usrmerge: dpkg may record a library under /lib or /usr/lib.
    { dpkg -S "/usr/lib/$HW_TRIPLET/$1" || dpkg -S "/lib/$HW_TRIPLET/$1"; } 2>/dev/null |
      head -1 | cut -d: -f1
  fi
}
checked=0
while IFS= read -r f; do
  head -c4 "$f" | grep -q $'\x7fELF' || continue
  machine=$(readelf -h "$f" | sed -n 's/^ *Machine: *//p')
  [[ "$machine" == "$HW_ELF_MACHINE" ]] || fail "${f#"$root"} is for '$machine', not '$HW_ELF_MACHINE'"
  for need in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ -n "$(find "$root" -name "$need" -print -quit)" ]] && continue
    pkg=$(provider "$need")
    [[ -n "$pkg" ]] || fail "${f#"$root"} needs $need, which no known package provides"
    grep -qx "$pkg" <<<"$dep_names" || fail "${f#"$root"} needs $need from $pkg, not in Depends"
  done
  checked=$((checked + 1))
done < <(find "$root/usr/bin" "$root/usr/lib" -type f)
((checked >= 2)) || fail "only $checked ELF files in the package"
echo "ok: $checked ELF files for $HW_ELF_MACHINE; every DT_NEEDED library is packaged or in Depends"

# shellcheck disable=SC2206
run=(${HW_EMULATOR:-} ${HW_EMULATOR:+-E} ${HW_EMULATOR:+LD_LIBRARY_PATH=$root/usr/lib/$HW_TRIPLET})
[[ -z "${HW_EMULATOR:-}" ]] && run=(env "LD_LIBRARY_PATH=$root/usr/lib/$HW_TRIPLET")
got=$("${run[@]}" "$root/usr/bin/headwise-translate" -m "$model" "Hello world.")
want=$("$translate" -m "$model" "Hello world.")
[[ -n "$want" && "$got" == "$want" ]] || fail "unpacked headwise-translate printed '$got', expected '$want'"
"${run[@]}" "$root/usr/bin/headwise-convert" --help >/dev/null || fail "unpacked headwise-convert --help"
echo "ok: the unpacked headwise-translate and headwise-convert run"
