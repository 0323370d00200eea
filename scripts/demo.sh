#!/usr/bin/env bash
# The README's main job: plan and apply the quickstart manifest against a fresh emulator on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
FCMCTL=.build/debug/fcmctl
source scripts/start-emulator.sh
workdir=$(mktemp -d)
trap 'stop_emulator; rm -rf "$workdir"' EXIT
state="$workdir/state.json"
echo "== fcm-emulator is listening on $FCM_EMULATOR_HOST"
echo "== Like FCM, it knows no registration until told: making the quickstart's known (scripts/emulator-seed.sh)"
FCMCTL=$FCMCTL bash scripts/emulator-seed.sh examples/quickstart

step() { echo; echo "== \$ fcmctl $*"; }
step plan -f examples/quickstart --detailed-exitcode
set +e; $FCMCTL plan -f examples/quickstart --state "$state" --detailed-exitcode; code=$?; set -e
echo "(exit code $code: 2 means changes are pending)"
[ "$code" -eq 2 ] || { echo "error: expected exit code 2 from the first plan" >&2; exit 1; }

step apply -f examples/quickstart --auto-approve
$FCMCTL apply -f examples/quickstart --state "$state" --auto-approve

step plan -f examples/quickstart --detailed-exitcode
$FCMCTL plan -f examples/quickstart --state "$state" --detailed-exitcode
echo "(exit code 0: FCM matches the manifest)"

echo; echo "== What the emulator now holds (GET /emulator/v1/state):"
python3 -c "import json,sys,urllib.request; print(json.dumps(json.load(urllib.request.urlopen(sys.argv[1])), indent=2))" "http://$FCM_EMULATOR_HOST/emulator/v1/state"
echo; echo "Demo complete: plan showed the changes, apply made them, and the second plan found nothing left to do."
