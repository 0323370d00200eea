"""`fcmctl version`, `--version` and `fcm-emulator --version` on the built binaries: what they print is what the
build was made from (make writes the build info before it builds: the commit, the day, the Swift version)
and the libcurl the process loaded."""
import json
import os
import re
import subprocess

from fcmharness import EMULATOR, ROOT, run

HEADER = os.path.join(ROOT, "Sources/CBuildInfo/build_info_generated.h")
LINE = re.compile(r"^fcmctl (\S+) \(commit (\S+), built (\S+), Swift (\S+), libcurl (\S+)\)$")


def source_version():
    with open(os.path.join(ROOT, "Sources/FCMBuildInfo/BuildInfo.swift")) as handle:
        return re.search(r'static let version = "([^"]+)"', handle.read()).group(1)


def git_commit():
    return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def test_version_json_has_the_five_keys_sorted_with_the_builds_values():
    result = run(["version", "--format", "json"])
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert list(document) == ["buildDate", "commit", "libcurl", "swift", "version"]
    assert document["version"] == source_version()
    assert os.path.exists(HEADER), "build with make (make build or make test): it writes the build info"
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", document["commit"]), document
    assert document["commit"].removesuffix("-dirty") == git_commit()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", document["buildDate"]), document
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True)
    swift = swift.stdout + swift.stderr
    assert f"Swift version {document['swift']} " in swift
    curl = subprocess.run(["curl-config", "--version"], capture_output=True, text=True).stdout.split()
    assert document["libcurl"] == curl[-1], curl


def test_version_and_the_flag_print_the_same_line():
    command = run(["version"])
    flag = run(["--version"])
    assert command.returncode == 0 and flag.returncode == 0
    assert command.stdout == flag.stdout
    match = LINE.match(command.stdout.rstrip("\n"))
    assert match, command.stdout
    document = json.loads(run(["version", "--format", "json"]).stdout)
    assert match.groups() == (document["version"], document["commit"], document["buildDate"], document["swift"], document["libcurl"])


def test_emulator_version_names_the_same_build():
    result = subprocess.run([EMULATOR, "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    document = json.loads(run(["version", "--format", "json"]).stdout)
    assert result.stdout == f"fcm-emulator {document['version']} (commit {document['commit']}, built {document['buildDate']})\n"
