#!/usr/bin/env bash
# Builds build/sysroot-ARCH (ARCH = aarch64 | armhf) from Debian's arm64 / armhf packages:
# apt-get download + dpkg -x of the packages listed in platforms/sysroot-packages.txt.
# The -dev packages cannot be co-installed with the host's, so they are unpacked, never
# installed. Downloads are cached in build/sysroot-cache/ARCH; a second run with the same
# package versions changes nothing (a stamp file records what was unpacked).
# Usage: platforms/sysroot.sh aarch64|armhf      Prints the sysroot path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
arch="${1:-}"
case "$arch" in
  aarch64) deb_arch=arm64 triplet=aarch64-linux-gnu ;;
  armhf) deb_arch=armhf triplet=arm-linux-gnueabihf ;;
  *) echo "usage: $0 aarch64|armhf" >&2; exit 2 ;;
esac
sysroot="$root/build/sysroot-$arch"
cache="$root/build/sysroot-cache/$arch"
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$here/sysroot-packages.txt")

SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
apt_opts=()  # as root, apt's _apt sandbox user cannot write into the cache directory
[[ $(id -u) -eq 0 ]] && apt_opts=(-o APT::Sandbox::User=root)
# A partly failed update (a mirror mid-sync for one index) is not fatal: the package lookup
# below fails, naming the package, if apt really lacks something.
apt_update() {
  $SUDO apt-get update -qq || echo "sysroot: apt-get update reported errors; using the lists apt has" >&2
}
# apt needs the foreign architecture in its lists to download its packages.
if ! dpkg --print-foreign-architectures | grep -qx "$deb_arch"; then
  echo "sysroot: adding architecture $deb_arch"
  $SUDO dpkg --add-architecture "$deb_arch"
  apt_update
elif ! apt-get download --print-uris "libc6:$deb_arch" >/dev/null 2>&1; then
  apt_update
fi

# apt's candidate version of each package decides the .deb file name (one apt call for all);
# cached files are reused, missing ones downloaded.
mkdir -p "$cache"
specs=()
for p in "${packages[@]}"; do
  if [[ "$p" == *:* ]]; then specs+=("$p"); else specs+=("$p:$deb_arch"); fi  # name:all as listed
done
uris="$(apt-get download --print-uris "${specs[@]}")" ||
  { echo "sysroot: apt cannot resolve ${specs[*]}" >&2; exit 1; }
debs=()
missing_specs=()
for spec in "${specs[@]}"; do
  file="$(awk -v n="${spec%%:*}" '{ f = $2; if (index(f, n "_") == 1) print f }' <<<"$uris" | head -1)"
  [[ -n "$file" ]] || { echo "sysroot: no download for $spec" >&2; exit 1; }
  debs+=("$file")
  [[ -s "$cache/$file" ]] || missing_specs+=("$spec")
done
if ((${#missing_specs[@]})); then
  echo "sysroot: downloading ${missing_specs[*]}"
  (cd "$cache" && apt-get download -qq "${apt_opts[@]}" "${missing_specs[@]}")
fi
for f in "${debs[@]}"; do
  [[ -s "$cache/$f" ]] || { echo "sysroot: $f missing after download" >&2; exit 1; }
done

stamp="$sysroot/.headwise-sysroot"
wanted="$(printf '%s\n' "${debs[@]}" | sort)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
  echo "sysroot: $sysroot is up to date (${#debs[@]} packages)"
  echo "$sysroot"
  exit 0
fi

rm -rf "$sysroot.tmp"
mkdir -p "$sysroot.tmp"
for f in "${debs[@]}"; do dpkg -x "$cache/$f" "$sysroot.tmp"; done

# Absolute symlinks (e.g. .so -> /lib/...) would point into the host; make them relative.
while IFS= read -r link; do
  target="$(readlink "$link")"
  if [[ "$target" == /* ]]; then
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot.tmp$target")" "$link"
  fi
done < <(find "$sysroot.tmp" -type l)

# Every shared library must find what it needs inside the sysroot (or it would fail at link
# time or under qemu with a confusing message).
libdirs=("$sysroot.tmp/lib/$triplet" "$sysroot.tmp/usr/lib/$triplet" "$sysroot.tmp/lib" "$sysroot.tmp/usr/lib")
missing=0
while IFS= read -r so; do
  while IFS= read -r need; do
    found=0
    # gconv modules load their helper libraries from their own directory.
    for d in "$(dirname "$so")" "${libdirs[@]}"; do [[ -e "$d/$need" ]] && { found=1; break; }; done
    if ((!found)); then
      echo "sysroot: ${so#"$sysroot.tmp"} needs $need, which no listed package provides" >&2
      missing=1
    fi
  done < <(readelf -d "$so" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done < <(find "$sysroot.tmp" -type f -name '*.so*' ! -name '*.py')
((missing == 0)) || exit 1

echo "$wanted" >"$sysroot.tmp/.headwise-sysroot"
rm -rf "$sysroot"
mv "$sysroot.tmp" "$sysroot"
echo "sysroot: unpacked ${#debs[@]} packages into $sysroot"
echo "$sysroot"
