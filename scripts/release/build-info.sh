#!/usr/bin/env bash
# Writes Sources/CBuildInfo/build_info_generated.h (git-ignored): the commit (git rev-parse --short=12 HEAD, plus
# -dirty when the tree has changes), the UTC build date (from SOURCE_DATE_EPOCH when set) and the Swift
# version, which `fcmctl version` and `fcm-emulator --version` print. The file is rewritten only when its
# content changes, so building an unchanged tree twice compiles nothing; a change recompiles one C file.
set -euo pipefail
cd "$(dirname "$0")/../.."
header=Sources/CBuildInfo/build_info_generated.h

commit=unknown
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  commit=$(git rev-parse --short=12 HEAD)
  if [ -n "$(git status --porcelain)" ]; then commit="$commit-dirty"; fi
fi
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
swift_version=$("${SWIFT:-swift}" --version 2>&1 | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -n1)

content="/* Written by scripts/release/build-info.sh; see include/build_info.h. */
#define FCM_BUILD_COMMIT \"$commit\"
#define FCM_BUILD_DATE \"$date\"
#define FCM_BUILD_SWIFT_VERSION \"${swift_version:-unknown}\""

if [ -f "$header" ] && [ "$(cat "$header")" = "$content" ]; then exit 0; fi
existed=$([ -f "$header" ] && echo yes || echo no)
printf '%s\n' "$content" > "$header.tmp"
mv "$header.tmp" "$header"
# build_info.c was compiled without the header before: its recorded dependencies do not name it yet.
if [ "$existed" = no ]; then touch Sources/CBuildInfo/build_info.c; fi
echo "build info: $commit, $date, Swift ${swift_version:-unknown}"
