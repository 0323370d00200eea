"""docs/emulator.md's Python recipe, run as written: its shell block's curl seeds a running fcm-emulator and its
Python block, copied out of the page unchanged, subscribes and sends with firebase-admin."""
import json
import os
import re
import subprocess
import sys
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMULATOR = os.environ.get("FCM_EMULATOR_BIN", os.path.join(ROOT, ".build/debug/fcm-emulator"))
DOC = os.path.join(ROOT, "docs", "emulator.md")
TOKEN = "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"


def blocks():
    text = open(DOC, encoding="utf-8").read()
    python = re.search(r"<!-- recipe: python[^>]*-->\n```python\n(.*?)```", text, re.S).group(1)
    # The shell block just before it: its curl command (with its continuation line) seeds the emulator.
    shell = text[:text.index("<!-- recipe: python")].rsplit("```sh\n", 1)[1].split("```")[0]
    curl = re.search(r"^curl .*?\n(?:  .*\n)*", shell, re.M).group(0)
    return curl, python


def test_the_python_recipe_runs_as_written(tmp_path):
    curl, python = blocks()
    process = subprocess.Popen([EMULATOR, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("fcm-emulator listening on http://"), line
        base = line.strip().split(" on ")[1]
        env = {**os.environ, "FCM_EMULATOR_HOST": base[len("http://"):]}
        seeded = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, env=env, timeout=60)
        assert seeded.returncode == 0 and json.loads(seeded.stdout) == {"registered": 1}, seeded.stdout + seeded.stderr
        (tmp_path / "fcm_emulator_recipe.py").write_text(python)
        ran = subprocess.run([sys.executable, "fcm_emulator_recipe.py"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert ran.returncode == 0, ran.stderr
        lines = ran.stdout.splitlines()
        assert lines[0] == "1" and lines[1].startswith("projects/quickstart-demo/messages/"), ran.stdout
        with urllib.request.urlopen(f"{base}/emulator/v1/registrations/{TOKEN}/inbox") as response:
            inbox = json.load(response)["messages"]
        assert [m["message"]["notification"]["title"] for m in inbox] == ["Rain at 5"]
    finally:
        process.terminate()
        process.wait(timeout=10)
