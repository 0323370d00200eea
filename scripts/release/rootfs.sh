#!/usr/bin/env bash
# Usage: bash scripts/release/rootfs.sh [EXTRA_PACKAGE…]
# A minimal Debian root file system such as a stock CI runner starts from: this machine's Debian release,
# from the apt sources this machine already uses, variant minbase, plus libcurl4 and ca-certificates (and any
# EXTRA_PACKAGE). Built with mmdebstrap (as root, or unprivileged through user namespaces) once, then cached
# as a tar archive under ${XDG_CACHE_HOME:-~/.cache}/fcmctl/, keyed by suite, architecture, variant, package
# list and the apt sources; later runs reuse it. Progress goes to stderr; the last line on stdout is the path
# of the tar archive (uncompressed; paths start with ./, /dev is empty).
set -euo pipefail

variant=minbase
packages=(ca-certificates libcurl4 "$@")

# shellcheck disable=SC1091
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || { echo "rootfs: cannot tell this machine's Debian release (VERSION_CODENAME in /etc/os-release)" >&2; exit 1; }
arch=$(dpkg --print-architecture)
command -v mmdebstrap >/dev/null || { echo "rootfs: mmdebstrap is missing: bash scripts/install-deps.sh --test" >&2; exit 1; }

# The sources apt reads here (sources.list, sources.list.d/*.list and *.sources), keeping only the entries for
# this release and its -updates/-security suites: third-party repositories are not part of a stock runner,
# and their keys are not in the new root.
sources_dir=$(mktemp -d -t fcmctl-rootfs-sources.XXXXXX)
trap 'rm -rf "$sources_dir"' EXIT
list_files=()
deb822_files=()
[ -f /etc/apt/sources.list ] && list_files+=(/etc/apt/sources.list)
for file in /etc/apt/sources.list.d/*.list; do [ -f "$file" ] && list_files+=("$file"); done
for file in /etc/apt/sources.list.d/*.sources; do [ -f "$file" ] && deb822_files+=("$file"); done
if [ ${#list_files[@]} -gt 0 ]; then
  # deb [options] URI SUITE COMPONENT…: keep lines whose suite is SUITE or SUITE-something.
  awk -v suite="$suite" '
    $1 == "deb" {
      i = 2
      if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      s = $(i + 1)
      if (s == suite || index(s, suite "-") == 1) print
    }' "${list_files[@]}" > "$sources_dir/host.list"
  [ -s "$sources_dir/host.list" ] || rm "$sources_dir/host.list"
fi
if [ ${#deb822_files[@]} -gt 0 ]; then
  # One stanza per paragraph: keep enabled "deb" stanzas that name SUITE or SUITE-something in Suites.
  awk -v suite="$suite" 'BEGIN { RS = ""; ORS = "\n\n" }
    {
      keep = 0; types = 0; enabled = 1
      n = split($0, lines, "\n")
      for (j = 1; j <= n; j++) {
        line = lines[j]
        if (line ~ /^#/) continue
        if (line ~ /^Types:/ && line ~ /[[:space:]]deb([[:space:]]|$)/) types = 1
        if (line ~ /^Enabled:[[:space:]]*no/) enabled = 0
        if (line ~ /^Suites:/) {
          m = split(substr(line, 8), words, /[[:space:]]+/)
          for (k = 1; k <= m; k++) if (words[k] == suite || index(words[k], suite "-") == 1) keep = 1
        }
      }
      if (keep && types && enabled) print
    }' "${deb822_files[@]}" > "$sources_dir/host.sources"
  [ -s "$sources_dir/host.sources" ] || rm "$sources_dir/host.sources"
fi
mirrors=()
for file in "$sources_dir"/host.list "$sources_dir"/host.sources; do [ -f "$file" ] && mirrors+=("$file"); done
[ ${#mirrors[@]} -gt 0 ] || { echo "rootfs: no apt source for $suite in /etc/apt/sources.list{,.d}" >&2; exit 1; }

sorted_packages=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd,)
key=$( { echo "$suite $arch $variant $sorted_packages"; cat "${mirrors[@]}"; } | sha256sum | cut -c1-12)
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/fcmctl"
tarball="$cache_dir/rootfs-$suite-$arch-$variant-$key.tar"
mkdir -p "$cache_dir"

# One build at a time per cache: a second run waits for the first and then reuses its archive.
exec 9>"$cache_dir/rootfs.lock"
flock 9
if [ -s "$tarball" ]; then
  echo "rootfs: cached $suite ($variant + $sorted_packages)" >&2
else
  echo "rootfs: building $suite/$arch ($variant + $sorted_packages) with mmdebstrap" >&2
  started=$(date +%s)
  partial="$tarball.partial.$$"
  trap 'rm -rf "$sources_dir" "$partial"' EXIT
  # --skip=output/dev: no device nodes in the archive, so unpacking it needs no mknod; users mount /dev.
  mmdebstrap --quiet --variant="$variant" --architectures="$arch" --include="$sorted_packages" \
    --skip=output/dev --format=tar "$suite" "$partial" "${mirrors[@]}" >&2
  mv "$partial" "$tarball"
  echo "rootfs: built in $(( $(date +%s) - started )) s: $(du -h "$tarball" | cut -f1)" >&2
fi
echo "$tarball"
