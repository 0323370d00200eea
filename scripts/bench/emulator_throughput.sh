#!/usr/bin/env bash
# Benchmark: fcm-emulator's v1 subscription throughput under wrk (keep-alive, loopback), its CPU use,
# and its memory once it holds 1,000,000 subscriptions. Needs wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "installing wrk"; apt-get install -y -qq wrk >/dev/null; }
swift build -c release --static-swift-stdlib --product fcm-emulator >/dev/null
EMULATOR_BIN=.build/release/fcm-emulator
source scripts/start-emulator.sh --subscription-qps 0 ${EMULATOR_FLAGS:---request-log-limit 0}
trap stop_emulator EXIT
cpu_seconds() { awk '{ print ($14 + $15) / 100 }' "/proc/$EMULATOR_PID/stat"; }
rss_mib() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$EMULATOR_PID/status"; }

echo "emulator pid $EMULATOR_PID on $FCM_EMULATOR_HOST; machine: $(nproc) cores"
before=$(cpu_seconds)
wrk -t 1 -c 64 -d "${DURATION:-20}s" --latency -s scripts/bench/emulator_subscribe.lua "http://$FCM_EMULATOR_HOST" | tee /tmp/wrk-emulator.txt
after=$(cpu_seconds)
requests=$(awk '/requests in/ { print $1 }' /tmp/wrk-emulator.txt)
subscriptions=$(python3 -c "import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))['subscriptions'])" "http://$FCM_EMULATOR_HOST/emulator/v1/stats")
echo "emulator CPU: $(python3 -c "print(f'{$after - $before:.1f}')") s over the run; subscriptions held: $subscriptions; RSS: $(rss_mib) MiB"
if [ "$subscriptions" -lt 1000000 ]; then
  echo "topping up to 1,000,000 subscriptions for the memory figure..."
  wrk -t 1 -c 64 -d 60s -s scripts/bench/emulator_subscribe.lua "http://$FCM_EMULATOR_HOST" >/dev/null
  subscriptions=$(python3 -c "import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))['subscriptions'])" "http://$FCM_EMULATOR_HOST/emulator/v1/stats")
  echo "subscriptions held: $subscriptions; RSS: $(rss_mib) MiB"
fi
