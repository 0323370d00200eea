#!/usr/bin/env bash
# Usage: scripts/release/clean-system-test.sh [ARCHIVE]     (make clean-system-test; make test runs it)
# Proves the release archive runs where nothing else was installed: a minimal Debian with only libcurl4 and
# ca-certificates added, as a stock CI runner has (scripts/release/rootfs.sh, cached after the first run).
# It unpacks ARCHIVE (default dist/fcmctl-VERSION-linux-ARCH.tar.gz, from `make dist`) into that root, checks
# from outside that the binaries need only glibc and libcurl (readelf), and inside chroot runs
# scripts/release/clean-system-checks.sh: ldd, fcmctl version, validate on every example, and plan → apply →
# plan of examples/quickstart against the archive's own fcm-emulator. Needs root (chroot, mounts).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    exec sudo -n --preserve-env=XDG_CACHE_HOME bash "$0" "$@"
  fi
  echo "clean system: needs root (chroot and mounts): run it as root or with password-less sudo" >&2
  exit 1
fi

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/FCMBuildInfo/BuildInfo.swift)
name=fcmctl-$version-linux-$(uname -m)
archive=${1:-dist/$name.tar.gz}
[ -f "$archive" ] || { echo "clean system: $archive is missing: make dist" >&2; exit 1; }
started=$(date +%s%N)

rootfs=$(bash scripts/release/rootfs.sh | tail -n1)
rootfs_ready=$(date +%s%N)

work=$(mktemp -d -t fcmctl-clean-system.XXXXXX)
root=$work/root
mounts=()
# shellcheck disable=SC2317  # reached through the EXIT trap
cleanup() {
  local status=$? index
  for ((index = ${#mounts[@]} - 1; index >= 0; index--)); do
    umount "${mounts[index]}" 2>/dev/null || umount -l "${mounts[index]}" || true
  done
  # Never delete through a mount (a bound /dev): if one is left, leave the directory too and say so.
  if findmnt -rn -o TARGET | grep -qF "$root/"; then
    echo "clean system: mounts remain under $root; not deleting $work" >&2
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$root"
tar -xf "$rootfs" -C "$root"
mkdir -p "$root/dev" "$root/proc" "$root/opt" "$root/root"
tar -xzf "$archive" -C "$root/opt"
bin=/opt/$name/bin

# From outside: what the dynamic loader will be asked for (NEEDED), glibc's libraries and libcurl only.
host_passed=0
host_failed=0
allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libutil\.so\.1|ld-linux[-a-z0-9_.]*\.so\.[0-9]+|libcurl\.so\.4)$'
for binary in fcmctl fcm-emulator; do
  if [ ! -x "$root$bin/$binary" ]; then
    echo "FAIL - the archive holds $name/bin/$binary"
    host_failed=$((host_failed + 1))
    continue
  fi
  needed=$(readelf -d "$root$bin/$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  others=$(grep -Ev "$allowed" <<<"$needed" || true)
  if [ -z "$others" ]; then
    echo "ok - $binary needs only glibc and libcurl: $(paste -sd' ' <<<"$needed")"
    host_passed=$((host_passed + 1))
  else
    echo "FAIL - $binary needs more than glibc and libcurl: $(paste -sd' ' <<<"$others")"
    host_failed=$((host_failed + 1))
  fi
done

cp -r examples "$root/root/examples"
cp scripts/release/clean-system-checks.sh "$root/root/clean-system-checks.sh"
mount -t proc proc "$root/proc"
mounts+=("$root/proc")
mount --bind /dev "$root/dev"
mounts+=("$root/dev")

set +e
timeout 600 chroot "$root" /usr/bin/env -i PATH="$bin:/usr/local/bin:/usr/bin:/bin" HOME=/root LANG=C.UTF-8 \
  VERSION="$version" HOST_PASSED="$host_passed" HOST_FAILED="$host_failed" \
  /bin/bash -c 'cd /root && exec /bin/bash ./clean-system-checks.sh'
status=$?
set -e
tenths() { echo "$(($1 / 1000000000)).$(($1 / 100000000 % 10))"; }
echo "clean system: $(tenths $(($(date +%s%N) - started))) s in all, the root file system ready after" \
  "$(tenths $((rootfs_ready - started))) s" >&2
exit "$status"
