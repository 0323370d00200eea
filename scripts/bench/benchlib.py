"""What the fleet benchmarks share: the release build, a generated fleet, an emulator without a quota."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# FCM_BUILD_DIR=.build/debug runs a benchmark on a debug build (figures then mean little; checks still hold).
BUILD = os.environ.get("FCM_BUILD_DIR", os.path.join(ROOT, ".build/release"))


def state_bytes(state):
    """A state's bytes on disk: the file, and when it is an index, the shards beside it (`state.json.shards/`)."""
    total = os.path.getsize(state)
    shards = state + ".shards"
    if os.path.isdir(shards):
        total += sum(os.path.getsize(os.path.join(shards, name)) for name in os.listdir(shards))
    return total


def generate_fleet(out, *flags):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts/bench/generate_fleet.py"), "--out", out, *flags], check=True)


class Emulator:
    """A release fcm-emulator on a free loopback port, with no latency and no quota."""

    def __init__(self):
        self.process = subprocess.Popen(
            [os.path.join(BUILD, "fcm-emulator"), "--host", "127.0.0.1", "--port", "0", "--subscription-qps", "0", "--auto-register"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.base = self.process.stdout.readline().strip().split(" on ")[1]
        self.env = {**os.environ, "FCM_EMULATOR_HOST": self.base[len("http://"):]}

    def stop(self):
        self.process.terminate()
        self.process.wait()
