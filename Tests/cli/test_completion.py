"""`fcmctl completion bash|zsh|fish` prints the shell's completion script; in bash, `-f` offers manifests and
directories, `--state` JSON files and directories, and subcommands complete by name."""
import os
import subprocess

import pytest

from fcmharness import BUILD, run


def complete(tmp_path, words):
    """What bash offers for the last (empty) word of `words`, with the script `fcmctl completion bash` printed."""
    line = " ".join(words) + " "
    script = (f'source <(fcmctl completion bash); COMP_WORDS=({" ".join(words)} ""); COMP_CWORD={len(words)}; '
              f'COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; _fcmctl fcmctl "" {words[-1]}; printf "%s\\n" "${{COMPREPLY[@]}}"')
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": BUILD + ":/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    return sorted({word for word in done.stdout.split() if not word.startswith(".")})  # the suite's .git aside


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_its_script(shell):
    result = run(["completion", shell])
    assert result.returncode == 0, result.stderr
    assert "fcmctl" in result.stdout and "manifest" in result.stdout and "plan" in result.stdout


def test_an_unknown_shell_is_a_usage_error():
    result = run(["completion", "powershell"])
    assert result.returncode == 64
    assert "bash" in result.stderr and "zsh" in result.stderr and "fish" in result.stderr


def test_bash_completes_manifests_state_files_and_subcommands(tmp_path):
    for name in ("a.yaml", "b.yml", "notes.txt", "s.json"):
        (tmp_path / name).write_text("")
    (tmp_path / "envs").mkdir()
    assert complete(tmp_path, ["fcmctl", "plan", "-f"]) == ["a.yaml", "b.yml", "envs"]
    assert complete(tmp_path, ["fcmctl", "apply", "--state"]) == ["envs", "s.json"]
    assert "completion" in complete(tmp_path, ["fcmctl"]) and "plan" in complete(tmp_path, ["fcmctl"])
