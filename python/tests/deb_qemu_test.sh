#!/usr/bin/env bash
# The cross build's .deb carries the Python module for the target's Python: builds the .deb
# (CPack), checks the module's files in Debian's dist-packages path and the Recommends, then
# unpacks it with the target's own Python (Debian's python3.X-minimal, libpython3.X-stdlib and
# python3-cffi-backend for the target architecture, fetched with apt-get download into
# ~/.cache/headwise/python-debs/ARCH) and, under qemu-user, imports the module from the
# unpacked package, translates with the packaged libheadwise and compares with the build's
# headwise-translate under qemu.
# Usage: deb_qemu_test.sh BUILD_DIR aarch64|armhf QEMU MODEL
# Environment: HW_SYSROOT (the sysroot: ld.so, libc and the runtime's libraries), HW_TRIPLET.
set -euo pipefail
build=$1 arch=$2 qemu=$3 model=$4
case "$arch" in aarch64) deb_arch=arm64 ;; armhf) deb_arch=armhf ;; *) echo "unknown arch $arch"; exit 2 ;; esac
triplet=${HW_TRIPLET:?} sysroot=${HW_SYSROOT:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/hw_pydeb_XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" >"$work/cpack.log" ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/pkg/headwise_*_"$deb_arch".deb)
site=/usr/lib/python3/dist-packages/headwise
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}' | sed 's|^\./|/|')
for f in __init__.py __init__.pyi _ffi.py _build_config.py _lib.py _model.py _translator.py _errors.py; do
  grep -qx "$site/$f" <<<"$contents" || fail "the package lacks $site/$f"
done
soname=$(grep -o "libheadwise\.so\.[0-9]*\.[0-9]*$" <<<"$contents" | head -1)
[[ -n "$soname" ]] || fail "the package lacks /usr/lib/$triplet/libheadwise.so.M.N"
grep -qx "/usr/lib/$triplet/$soname" <<<"$contents" || fail "libheadwise not in /usr/lib/$triplet"
recommends=$(dpkg-deb -f "$deb" Recommends)
grep -q python3-cffi-backend <<<"$recommends" || fail "Recommends lacks python3-cffi-backend: $recommends"
echo "ok: $(basename "$deb") has the module in $site, $soname, Recommends: $recommends"

# The target's Python (the same Debian release as this machine's, so the same 3.X).
minor=$(/usr/bin/python3 -c 'import sys; print(sys.version_info[1])')
py=python3.$minor
cache="${XDG_CACHE_HOME:-$HOME/.cache}/headwise/python-debs/$deb_arch"
mkdir -p "$cache"
packages=("$py-minimal" "lib$py-minimal" "lib$py-stdlib" python3-cffi-backend libffi8 zlib1g libexpat1)
missing=()
for p in "${packages[@]}"; do
  compgen -G "$cache/${p}_*_*.deb" >/dev/null || missing+=("$p:$deb_arch")
done
if ((${#missing[@]})); then
  apt_opts=()
  [[ $(id -u) -eq 0 ]] && apt_opts=(-o APT::Sandbox::User=root)
  (cd "$cache" && apt-get download -qq "${apt_opts[@]}" "${missing[@]}") ||
    fail "apt-get download ${missing[*]} (the $deb_arch architecture must be in apt's lists: platforms/sysroot.sh adds it)"
fi
root="$work/root"
for p in "${packages[@]}"; do dpkg -x "$(ls "$cache/${p}"_*_*.deb | tail -1)" "$root"; done
dpkg -x "$deb" "$root"

# Absolute host paths inside the guest: qemu -L looks under the sysroot first, then the host.
run=("$qemu" -L "$sysroot" -E "LD_LIBRARY_PATH=$root/usr/lib/$triplet:$root/lib/$triplet")
probe='import json, sys, headwise
t = headwise.Translator(headwise.Model(sys.argv[1]))
r = t.translate(["Open the file.", "Close the window."])
print(json.dumps({"module": headwise.__file__, "library": headwise.library_path,
                  "texts": [x.text for x in r]}))'
out=$("${run[@]}" "$root/usr/bin/$py" -c "$probe" "$model") || fail "import headwise under qemu"
echo "ok: under $(basename "$qemu"): $out"
/usr/bin/python3 - "$out" "$root" "$site" "$triplet" "$soname" <<'PY' || exit 1
import json, os, sys
out, root, site, triplet, soname = sys.argv[1:]
r = json.loads(out)
assert r["module"] == root + site + "/__init__.py", r["module"]
assert os.path.normpath(r["library"]) == root + f"/usr/lib/{triplet}/{soname}", r["library"]
PY
want=$("${run[@]}" "$build/examples/translate/headwise-translate" -m "$model" "Open the file." "Close the window.")
got=$(/usr/bin/python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])["texts"]))' "$out")
[[ "$got" == "$want" ]] || fail "the module translated '$got', headwise-translate '$want'"
echo "ok: the packaged module under qemu translates as headwise-translate does"
