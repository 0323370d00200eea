#!/usr/bin/env bash
# Usage: source scripts/start-emulator.sh [emulator flags…]
# Starts fcm-emulator on a free loopback port, waits for its "listening" line, and exports
# FCM_EMULATOR_HOST and EMULATOR_PID. Call stop_emulator when done.
EMULATOR_BIN=${EMULATOR_BIN:-.build/debug/fcm-emulator}
EMULATOR_LOG=$(mktemp -t fcm-emulator.XXXXXX)
"$EMULATOR_BIN" --host 127.0.0.1 --port 0 "$@" >"$EMULATOR_LOG" 2>&1 &
EMULATOR_PID=$!
for _ in $(seq 1 300); do
  if line=$(grep -m1 '^fcm-emulator listening on http://' "$EMULATOR_LOG"); then break; fi
  if ! kill -0 "$EMULATOR_PID" 2>/dev/null; then cat "$EMULATOR_LOG" >&2; echo "error: fcm-emulator exited early" >&2; return 1; fi
  sleep 0.1
done
[ -n "${line:-}" ] || { echo "error: fcm-emulator did not start within 30 s" >&2; kill "$EMULATOR_PID"; return 1; }
export FCM_EMULATOR_HOST=${line#fcm-emulator listening on http://}
export EMULATOR_PID
stop_emulator() { kill "$EMULATOR_PID" 2>/dev/null || true; wait "$EMULATOR_PID" 2>/dev/null || true; rm -f "$EMULATOR_LOG"; }
