"""Names from device exports reach every output: a quoted CSV name or a JSON Lines `\\n` must not start a line
the GitHub runner reads as a workflow command (`::error file=x::FORGED`, `::add-mask::…`), and ESC, BEL or NUL
must not reach a terminal or a log raw. Such a name is refused at its file and line, shown escaped."""
import json
import re

from fcmharness import Emulator, run

MANIFEST = """apiVersion: fcmctl/v1
project: {id: p, senderId: "1"}
deviceFiles: [devices.csv, more.jsonl]
topics:
  news: {members: {selector: {role: kiosk}}}
"""
CSV = 'name,token,labels.role\n"k1\n::error file=x,line=1::FORGED",k1:APA91baaaaaaaaaaaaaaaa,kiosk\nk2,k2:APA91bbbbbbbbbbbbbbbbb,"kio\x1b[31msk\x07"\n'
JSONL = ('{"name": "k3\\n::add-mask::secret", "token": "k3:APA91bcccccccccccccc", "labels": {"role": "kiosk"}}\n'
         '{"name": "k4\\u0000", "token": "k4:APA91bdddddddddddddd", "labels": {"role": "kiosk"}}\n')
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def test_control_characters_in_names_are_refused_and_never_printed_raw(tmp_path):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    (tmp_path / "devices.csv").write_text(CSV)
    (tmp_path / "more.jsonl").write_text(JSONL)
    emulator = Emulator()
    try:
        runs = [run(["validate", "-f", str(tmp_path), "--format", fmt]) for fmt in ("text", "github", "json")]
        runs += [run(["plan", "-f", str(tmp_path), "--state", str(tmp_path / "s.json"), "--format", fmt], emulator)
                 for fmt in ("text", "github", "markdown", "json")]
    finally:
        emulator.stop()
    for result in runs:
        assert result.returncode == 1, result.stdout + result.stderr
        for stream in (result.stdout, result.stderr):
            assert not RAW.search(stream), repr(stream)
            commands = [line for line in stream.splitlines() if line.lstrip().startswith("::")]
            assert all(line.startswith(f"::error file={tmp_path}/") or line.startswith("::error::") for line in commands), commands
    text = runs[0].stderr
    assert "devices.csv:2:1: error: a device name holds the control character U+000A: k1\\n::error file=x,line=1::FORGED" in text
    assert "devices.csv:4:1: error: device/k2: the label role=kio\\u{1B}[31msk\\u{7} holds the control character U+001B" in text
    assert "more.jsonl:1:1: error: a device name holds the control character U+000A" in text
    assert "more.jsonl:2:1: error: a device name holds the control character U+0000" in text
    document = json.loads(runs[2].stdout)
    assert sum(d["severity"] == "error" for d in document["diagnostics"]) == 4
