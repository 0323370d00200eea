#!/usr/bin/env bash
# The optimizer once turned task-group results into garbage that only a release build showed (a crash in
# refresh). Tests run debug builds, so this builds fcmctl in release and runs plan → apply → plan on the
# examples against the emulator: exit 2, 0, then 0 with no changes.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product fcmctl
FCMCTL=.build/release/fcmctl
source scripts/start-emulator.sh
workdir=$(mktemp -d)
trap 'stop_emulator; rm -rf "$workdir"' EXIT
for example in quickstart kiosk-fleet per-user-groups legacy-iid environments/dev environments/prod; do
  state="$workdir/$example/state.json"
  # The emulator runs in its default mode, as strict as FCM: each example's registrations are made known first.
  FCMCTL=$FCMCTL bash scripts/emulator-seed.sh "examples/$example" > /dev/null
  set +e; $FCMCTL plan -f "examples/$example" --state "$state" --detailed-exitcode > /dev/null; code=$?; set -e
  [ "$code" -eq 2 ] || { echo "release smoke: $example: first plan exited $code, expected 2" >&2; exit 1; }
  $FCMCTL apply -f "examples/$example" --state "$state" --auto-approve > /dev/null
  $FCMCTL plan -f "examples/$example" --state "$state" --detailed-exitcode > /dev/null
done
echo "release smoke: 6 passed, 0 failed"
