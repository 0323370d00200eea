#!/usr/bin/env bash
# Usage: bash scripts/release/dist.sh     (`make dist`, after `make release` built what it packs)
# Packs the release build (.build/release: swift build -c release --static-swift-stdlib) into dist/:
#   fcmctl-VERSION-linux-ARCH.tar.gz, all under fcmctl-VERSION-linux-ARCH/:
#     bin/fcmctl                                         fcmctl-multicall, stripped; a .gnu_debuglink names the debug file
#     bin/fcm-emulator                                   a symbolic link to fcmctl: the binary is both, by the name run
#     share/bash-completion/completions/, share/zsh/site-functions/, share/fish/vendor_completions.d/
#     share/man/man1/                                    when argument-parser's generate-manual builds here
#     README.md, LICENSE, THIRD_PARTY.md
#   fcmctl-VERSION-linux-ARCH-debug-symbols.tar.gz     bin/*.debug: the DWARF, for crash reports
#   SHA256SUMS                                         `sha256sum -c SHA256SUMS` in dist/ (other files' lines kept)
# It refuses binaries that need more at run time than glibc and libcurl. The archives are byte-for-byte
# reproducible: sorted names, owner 0, mtime SOURCE_DATE_EPOCH (default: the commit's time), gzip -n.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
build=.build/release

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/FCMBuildInfo/BuildInfo.swift)
arch=$(uname -m)
name=fcmctl-$version-linux-$arch
for binary in fcmctl fcm-emulator fcmctl-multicall; do
  [ -x "$build/$binary" ] || { echo "dist: $build/$binary is missing: make release" >&2; exit 1; }
done
built_version=$("$build/fcmctl" version --format json | sed -n 's/.*"version": "\(.*\)".*/\1/p')
[ "$built_version" = "$version" ] || { echo "dist: $build/fcmctl is $built_version, the source says $version: make release" >&2; exit 1; }

# At run time: glibc's libraries and libcurl, nothing else (libyaml and the Swift runtime are inside).
allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libutil\.so\.1|ld-linux[-a-z0-9_.]*\.so\.[0-9]+|libcurl\.so\.4)$'
for binary in fcmctl-multicall; do
  others=$(readelf -d "$build/$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev "$allowed" || true)
  [ -z "$others" ] || { echo "dist: $binary needs $(paste -sd' ' <<<"$others") at run time" >&2; exit 1; }
done

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
stage=$(mktemp -d -t fcmctl-dist.XXXXXX)
trap 'rm -rf "$stage"' EXIT
top=$stage/$name
symbols=$stage/symbols/$name
mkdir -p "$top/bin" "$symbols/bin" "$top/share/bash-completion/completions" "$top/share/zsh/site-functions" \
  "$top/share/fish/vendor_completions.d"

# One binary for both programs: two would each carry the Swift runtime, Foundation and ICU's data.
objcopy --only-keep-debug "$build/fcmctl-multicall" "$symbols/bin/fcmctl.debug"
objcopy --strip-all "$build/fcmctl-multicall" "$top/bin/fcmctl"
# The link records the file name and a CRC: gdb finds bin/fcmctl.debug beside the binary or under /usr/lib/debug.
(cd "$symbols/bin" && objcopy --add-gnu-debuglink="fcmctl.debug" "$top/bin/fcmctl")
chmod 0755 "$top/bin/fcmctl"
chmod 0644 "$symbols/bin/fcmctl.debug"
ln -s fcmctl "$top/bin/fcm-emulator"
[ "$("$top/bin/fcm-emulator" --version | cut -d' ' -f1)" = "fcm-emulator" ] || { echo "dist: bin/fcm-emulator is not the emulator" >&2; exit 1; }
for binary in fcmctl fcm-emulator; do
  # Completions come from the shipped binary: what is shipped is what answers.
  "$top/bin/$binary" --generate-completion-script bash > "$top/share/bash-completion/completions/$binary"
  "$top/bin/$binary" --generate-completion-script zsh > "$top/share/zsh/site-functions/_$binary"
  "$top/bin/$binary" --generate-completion-script fish > "$top/share/fish/vendor_completions.d/$binary.fish"
done

# Man pages: argument-parser's generate-manual tool (what its plugin runs), built from the local checkout
# and run on the binaries. Built in release so it shares nothing that would rebuild the products.
manual_date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
if "$SWIFT" build -c release --static-swift-stdlib --product generate-manual >"$stage/generate-manual.log" 2>&1; then
  mkdir -p "$top/share/man/man1"
  for binary in fcmctl fcm-emulator; do
    "$build/generate-manual" "$top/bin/$binary" --multi-page --date "$manual_date" --output-directory "$top/share/man/man1"
  done
else
  echo "dist: no man pages: generate-manual did not build (see below)" >&2
  tail -n 20 "$stage/generate-manual.log" >&2
fi

cp README.md "$top/README.md"
cp LICENSE "$top/LICENSE"
libyaml_version=$(dpkg-query -W -f='${Version}' libyaml-dev 2>/dev/null | sed 's/-[^-]*$//' || true)
swift_version=$("$build/fcmctl" version --format json | sed -n 's/.*"swift": "\(.*\)".*/\1/p')
gcc_version=$(basename "$(dirname "$(clang -print-file-name=libstdc++.a 2>/dev/null || echo unknown/x)")")
SWIFT_VERSION=$swift_version LIBYAML_VERSION=${libyaml_version:-libyaml-dev} GCC_VERSION=$gcc_version \
  python3 scripts/release/third-party-notice.py "$build" fcmctl fcm-emulator > "$top/THIRD_PARTY.md"
find "$top" -type d -exec chmod 0755 {} +
find "$top/share" "$top"/*.md "$top/LICENSE" -type f -exec chmod 0644 {} +

pack() { # DIRECTORY ARCHIVE: a reproducible .tar.gz of DIRECTORY's NAME folder
  tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf - "$name" | gzip -9n > "$2"
}
# dist/ may hold other release files (make image's OCI archive): replace only the archives this writes and
# their lines in SHA256SUMS; other lines stay as they are while their files exist.
# Packed in the stage, then moved in: a reader never sees half an archive. One run at a time writes dist/.
pack "$stage" "$stage/$name.tar.gz"
pack "$stage/symbols" "$stage/$name-debug-symbols.tar.gz"
mkdir -p dist
exec 8>dist/.lock
flock 8
rm -f dist/fcmctl-*-linux-*.tar.gz
mv "$stage/$name.tar.gz" "$stage/$name-debug-symbols.tar.gz" dist/
(
  cd dist
  {
    sha256sum "$name.tar.gz" "$name-debug-symbols.tar.gz"
    if [ -f SHA256SUMS ]; then
      while read -r sum file; do
        [[ ${file#\*} == fcmctl-*-linux-*.tar.gz ]] || [ ! -f "${file#\*}" ] || echo "$sum  $file"
      done < SHA256SUMS
    fi
  } | sort -k2 > SHA256SUMS.new
  mv SHA256SUMS.new SHA256SUMS
)

size() { du -h --apparent-size "$1" | cut -f1; }
echo "dist: dist/$name.tar.gz $(size "dist/$name.tar.gz") (fcmctl and fcm-emulator: one binary of $(size "$top/bin/fcmctl") stripped)"
echo "dist: dist/$name-debug-symbols.tar.gz $(size "dist/$name-debug-symbols.tar.gz"), dist/SHA256SUMS"
