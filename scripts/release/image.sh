#!/usr/bin/env bash
# Usage: bash scripts/release/image.sh [DIST_DIR]        (default: dist)
# The container image fcmctl:VERSION, without a registry or a container engine: two layers, the minimal
# Debian root file system of scripts/release/rootfs.sh (libcurl4 and ca-certificates; cached) and the
# release archive's fcmctl and fcm-emulator in /usr/local/bin (with its README, LICENSE and THIRD_PARTY.md
# in /usr/local/share/doc/fcmctl), assembled with umoci into an OCI archive, DIST_DIR/fcmctl-VERSION-oci.tar.
# Entrypoint /usr/local/bin/fcmctl, working directory /work, the org.opencontainers.image.* labels. The
# image's line in DIST_DIR/SHA256SUMS is (re)written. Times come from the binaries' commit (SOURCE_DATE_EPOCH), so
# the same inputs give the same image. Progress goes to stderr; the last line on stdout is the archive's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist="${1:-dist}"
source_url="https://github.com/fcmctl/fcmctl"

command -v umoci >/dev/null || { echo "image: umoci is missing: bash scripts/install-deps.sh --test" >&2; exit 1; }
case "$(uname -m)" in
  x86_64) arch=x86_64 goarch=amd64 ;;
  aarch64) arch=aarch64 goarch=arm64 ;;
  *) echo "image: no release archive for $(uname -m)" >&2; exit 1 ;;
esac
shopt -s nullglob
archives=("$dist"/fcmctl-*-linux-"$arch".tar.gz)
[ ${#archives[@]} -eq 1 ] || { echo "image: need exactly one $dist/fcmctl-VERSION-linux-$arch.tar.gz (make dist); found ${#archives[@]}" >&2; exit 1; }
archive="${archives[0]}"
top=$(basename "$archive" .tar.gz)
version="${top#fcmctl-}"
version="${version%-linux-"$arch"}"
# The archive is what users download: it must match the SHA256SUMS it ships with.
(cd "$dist" && grep -q " [ *]\?$top.tar.gz\$" SHA256SUMS && sha256sum -c --ignore-missing --quiet SHA256SUMS) \
  || { echo "image: $archive does not match $dist/SHA256SUMS" >&2; exit 1; }

started=$(date +%s%N)

rootfs=$(bash scripts/release/rootfs.sh | tail -n 1)
[ -s "$rootfs" ] || { echo "image: scripts/release/rootfs.sh gave no root file system ($rootfs)" >&2; exit 1; }

work=$(mktemp -d -t fcmctl-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The base layer is that root file system less what nothing in the image reads, as Debian's slim images do:
# manual pages, info, translations (/usr/share/locale, but locale.alias), and documentation other than the
# copyright files (the packages' licences stay).
python3 - "$rootfs" "$work/base.tar" <<'PYTHON'
import re, sys, tarfile
drop = re.compile(r"\./usr/share/(man|info|locale|doc)/.+")
keep = re.compile(r"\./usr/share/(locale/locale\.alias|doc/[^/]+/copyright|doc/[^/]+)")
with tarfile.open(sys.argv[1]) as source, tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as base:
    for member in source:
        if drop.fullmatch(member.name) and not keep.fullmatch(member.name):
            continue
        base.addfile(member, source.extractfile(member) if member.isreg() else None)
PYTHON
tar -xzf "$archive" -C "$work"
for program in fcmctl fcm-emulator; do
  [ -x "$work/$top/bin/$program" ] || { echo "image: $archive lacks $top/bin/$program" >&2; exit 1; }
done
# The revision label: the commit the binaries were built from (what `fcmctl version` reports, "-dirty" kept),
# in full when this repository has it.
commit=$("$work/$top/bin/fcmctl" version --format json | sed -n 's/.*"commit": "\(.*\)".*/\1/p')
[ -n "$commit" ] || { echo "image: $top/bin/fcmctl reports no commit" >&2; exit 1; }
revision=$(git rev-parse --verify --quiet "${commit%-dirty}^{commit}" || echo "${commit%-dirty}")
[ "${commit%-dirty}" = "$commit" ] || revision="$revision-dirty"
# Times: that commit's (or HEAD's when this repository lacks it), so the same archive gives the same image.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct "${revision%-dirty}" 2>/dev/null || git log -1 --format=%ct)}"
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
# The licence label: the SPDX identifier the LICENSE file's first non-blank line names.
case "$(grep -m 1 '[^[:space:]]' "$work/$top/LICENSE" 2>/dev/null)" in
  *"MIT License"*) licenses=MIT ;;
  *"Apache License"*) licenses=Apache-2.0 ;;
  *"BSD 3-Clause"*) licenses=BSD-3-Clause ;;
  *) licenses="${FCMCTL_LICENSES:-}"
     [ -n "$licenses" ] || { echo "image: cannot tell the licence from $top/LICENSE; set FCMCTL_LICENSES (SPDX)" >&2; exit 1; } ;;
esac

# The application layer: a tar with fixed owners, order and times.
layer="$work/layer"
mkdir -p "$layer/usr/local/bin" "$layer/usr/local/share/doc/fcmctl" "$layer/work"
# -P keeps bin/fcm-emulator a link to fcmctl: one binary, two names, as in the archive.
cp -P "$work/$top/bin/fcmctl" "$work/$top/bin/fcm-emulator" "$layer/usr/local/bin/"
for doc in README.md LICENSE THIRD_PARTY.md; do
  if [ -f "$work/$top/$doc" ]; then cp "$work/$top/$doc" "$layer/usr/local/share/doc/fcmctl/"; fi
done
tar -C "$layer" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$work/app.tar" ./usr ./work

layout="$work/oci"
image="$layout:fcmctl:$version"
history=(--history.created "$created" --history.author "fcmctl release ($source_url)")
umoci init --layout "$layout"
umoci new --image "$image"
echo "image: adding the root file system layer ($(du -h "$work/base.tar" | cut -f1) uncompressed, of $(du -h "$rootfs" | cut -f1))" >&2
umoci raw add-layer --image "$image" "${history[@]}" \
  --history.created_by "scripts/release/rootfs.sh: mmdebstrap minbase + ca-certificates libcurl4; no man, info, locale, doc but copyright" \
  "$work/base.tar"
umoci raw add-layer --image "$image" "${history[@]}" \
  --history.created_by "fcmctl and fcm-emulator from $top.tar.gz into /usr/local/bin" "$work/app.tar"
umoci config --image "$image" "${history[@]}" --history.created_by "image configuration" \
  --created "$created" --os linux --architecture "$goarch" \
  --config.entrypoint /usr/local/bin/fcmctl --config.workingdir /work \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.env LANG=C.UTF-8 \
  --config.label "org.opencontainers.image.title=fcmctl" \
  --config.label "org.opencontainers.image.description=Firebase Cloud Messaging device groups and topics as code, and fcm-emulator" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.revision=$revision" \
  --config.label "org.opencontainers.image.source=$source_url" \
  --config.label "org.opencontainers.image.licenses=$licenses" \
  --config.label "org.opencontainers.image.created=$created"
umoci gc --layout "$layout"

# An OCI archive is the layout as a tar (what `podman load` and `skopeo copy oci-archive:` read).
output="$dist/fcmctl-$version-oci.tar"
tar -C "$layout" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  -cf "$output.partial" oci-layout index.json blobs
# One writer of dist/ at a time (scripts/release/dist.sh takes the same lock).
exec 8>"$dist/.lock"
flock 8
mv "$output.partial" "$output"

# This image's line in SHA256SUMS, replacing an older one; the other lines stay as they are.
name=$(basename "$output")
sums="$dist/SHA256SUMS"
{ grep -v " [ *]\?$name\$" "$sums" || true; (cd "$dist" && sha256sum "$name"); } > "$sums.partial"
mv "$sums.partial" "$sums"

echo "image: fcmctl:$version, $(du -h "$output" | cut -f1) ($output); built in $(( ($(date +%s%N) - started) / 1000000000 )) s" >&2
echo "$output"
