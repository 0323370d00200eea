"""Every subcommand's `--help` as a person reads it: compared with a golden file (regenerate them with
`FCMCTL_UPDATE_GOLDEN=1 pytest Tests/cli/test_help.py` and read the diff), with no Swift type name or debug
description in it, and durations as written (`30m`)."""
import os
import re

import pytest

from fcmharness import ROOT, run

GOLDEN = os.path.join(ROOT, "Tests", "cli", "golden", "help")
COMMANDS = [
    [], ["validate"], ["fmt"], ["plan"], ["apply"], ["drift"], ["show"], ["send"], ["version"], ["completion"],
    ["import"], ["import", "group"], ["import", "subscriptions"], ["migrate"], ["migrate", "groups"],
    ["state"], ["state", "list"], ["state", "show"], ["state", "rm"], ["state", "pull"], ["state", "push"], ["state", "unlock"],
    ["state", "migrate"],
]
# What a leaked description looks like: `LockTimeout(duration: …)`, `Optional(…)`, `DecodingError`.
LEAKED = re.compile(r"\b[A-Z][A-Za-z]+\((duration|text|rawValue|value|_)|Optional\(|DecodingError|Swift\.|\bnil\b")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "fcmctl")
def test_help_matches_its_golden_file_and_leaks_no_type(command):
    result = run([*command, "--help"], env={"COLUMNS": "100"})
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert not LEAKED.search(text), LEAKED.search(text).group(0)
    path = os.path.join(GOLDEN, ("-".join(command) or "fcmctl") + ".txt")
    if os.environ.get("FCMCTL_UPDATE_GOLDEN"):
        with open(path, "w") as out:
            out.write(text)
    with open(path) as golden:
        assert text == golden.read(), f"{path} differs: regenerate with FCMCTL_UPDATE_GOLDEN=1 and read the diff"


def test_durations_are_shown_as_written_and_negative_ones_named():
    apply = run(["apply", "--help"]).stdout
    assert "Default: 30m." in apply and "LockTimeout" not in apply
    negative = run(["apply", "--timeout", "-1"])
    assert negative.returncode == 64
    assert "'-1' is a negative duration" in negative.stderr and "Missing value" not in negative.stderr
    malformed = run(["plan", "--lock-timeout", "5x"]) if "--lock-timeout" in run(["plan", "--help"]).stdout else run(["apply", "--lock-timeout", "5x"])
    assert malformed.returncode == 64 and "'5x' is not a duration" in malformed.stderr
