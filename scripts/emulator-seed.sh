#!/usr/bin/env bash
# Usage: scripts/emulator-seed.sh MANIFEST_DIR…  (with FCM_EMULATOR_HOST set, FCMCTL optional)
# fcm-emulator, like FCM, knows no registration until told: this makes a manifest's registrations known,
# owned by the manifest's project (and its sender id), through POST /emulator/v1/registrations.
set -euo pipefail
# fcmctl on PATH (a release), else the debug build of this checkout.
FCMCTL=${FCMCTL:-$(command -v fcmctl || echo .build/debug/fcmctl)}
: "${FCM_EMULATOR_HOST:?set FCM_EMULATOR_HOST (source scripts/start-emulator.sh)}"
for manifest in "$@"; do
  "$FCMCTL" validate -f "$manifest" --emulator-seed --show-tokens | python3 -c '
import sys, urllib.request
request = urllib.request.Request(sys.argv[1] + "/emulator/v1/registrations", data=sys.stdin.buffer.read(),
                                 method="POST", headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request) as response:
    print(sys.argv[2] + ": " + response.read().decode().strip())
' "http://$FCM_EMULATOR_HOST" "$manifest"
done
