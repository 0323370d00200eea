"""A CI job's stderr is a pipe: a long apply says how far it got at least every 10 s (done/total, rate,
failures, time left), as Terraform's "Still creating... [10s elapsed]" does, so the job does not look hung.
Under `--format github` a phase's lines are one collapsible group; a phase done within 10 s prints nothing."""
import json
import re
import subprocess
import threading
import time

from fcmharness import FCMCTL, Emulator

DEVICES = 2500
LINE = re.compile(r"^Applying: (done, )?(\d+)/(\d+) \(\d+%\), \d+/s, (\d+) failed(, about \d+ s left)? \[(\d+) s elapsed\]$")


def write_fleet(tmp_path):
    with open(tmp_path / "d.jsonl", "w") as out:
        for i in range(DEVICES):
            out.write(json.dumps({"name": f"d{i}", "token": f"d{i}:APA91b" + "x" * 30, "labels": {"role": "kiosk"}}) + "\n")
    (tmp_path / "fcmctl.yaml").write_text(
        'apiVersion: fcmctl/v1\nproject: {id: p, senderId: "1"}\ndeviceFiles: [d.jsonl]\ntopics:\n  news: {members: {selector: {role: kiosk}}}\n')


def timed_stderr(arguments, emulator):
    """Runs fcmctl with stderr piped and notes when each line arrived."""
    process = subprocess.Popen([FCMCTL, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={"PATH": "/usr/bin:/bin", "FCM_EMULATOR_HOST": emulator.host})
    lines = []
    stdout = []
    reader = threading.Thread(target=lambda: stdout.append(process.stdout.read()))
    reader.start()
    started = time.monotonic()
    for line in process.stderr:
        lines.append((time.monotonic() - started, line.rstrip("\n")))
    process.wait(timeout=120)
    reader.join()
    return process.returncode, lines, stdout[0]


def test_a_piped_long_apply_prints_progress_at_least_every_ten_seconds(tmp_path):
    write_fleet(tmp_path)
    emulator = Emulator()
    try:
        # 1 % of the subscriptions refused (400, final): the lines count them as they go.
        emulator.request("PUT", "/emulator/v1/faults", {"error_rates": [{"endpoint": "topics.create", "status": 400, "rate": 0.01}]})
        # 2,500 subscriptions at 100 a second: about 25 s of applying.
        code, lines, stdout = timed_stderr(
            ["apply", "-f", str(tmp_path), "--state", str(tmp_path / "s.json"), "--auto-approve", "--qps", "100", "--format", "github"], emulator)
    finally:
        emulator.stop()
    assert code == 3, lines  # applied in part: the registrations FCM refused
    texts = [text for _, text in lines]
    progress = [(at, LINE.match(text)) for at, text in lines if LINE.match(text)]
    assert len(progress) >= 3, texts
    begin = texts.index(next(t for t in texts if t.startswith("::group::Applying")))
    assert texts[begin] == "::group::Applying (2500 operations)", texts
    end = texts.index("::endgroup::")
    assert begin < end and all(begin < texts.index(m.group(0)) < end for _, m in progress), texts
    final = progress[-1][1]
    assert final.group(1) == "done, " and final.group(2) == "2500" and int(final.group(4)) > 0, final.group(0)
    assert f"{final.group(4)} failed" in stdout, stdout[-2000:]
    # Between lines while the phase runs: at most 10 s, and the first after about 10 s.
    times = [at for at, m in progress]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert all(gap <= 11.5 for gap in gaps), (gaps, texts)  # 10 s, on a heartbeat of 0.25 s, on a busy machine
    elapsed = [int(m.group(6)) for _, m in progress[:-1]]
    assert elapsed == [10 * (i + 1) for i in range(len(elapsed))], texts


def test_a_quick_run_prints_no_progress_and_json_stays_one_document(tmp_path):
    write_fleet(tmp_path)
    emulator = Emulator()
    try:
        code, lines, stdout = timed_stderr(
            ["apply", "-f", str(tmp_path), "--state", str(tmp_path / "s.json"), "--auto-approve", "--format", "json"], emulator)
    finally:
        emulator.stop()
    assert code == 0, lines
    assert not [text for _, text in lines if text.startswith("Applying") or text.startswith("::group::")], lines
    assert json.loads(stdout)["summary"] is not None
