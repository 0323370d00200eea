"""`fmt` and `validate` take paths, directories searched recursively the way `terraform fmt -recursive` users
expect; YAML that is not a manifest (a workflow) is skipped."""
import os
import shutil

from fcmharness import ROOT, run


def test_fmt_and_validate_walk_directories(tmp_path):
    tree = tmp_path / "repo"
    shutil.copytree(os.path.join(ROOT, "examples"), tree)
    listed = run(["validate", str(tree)])
    assert listed.returncode == 0, listed.stderr
    assert sorted(line.split(":")[0] for line in listed.stdout.splitlines()) == sorted(
        str(tree / name) for name in ("environments/dev", "environments/prod", "kiosk-fleet", "legacy-iid", "per-user-groups", "quickstart"))
    assert run(["fmt", "--check", str(tree)]).returncode == 0  # the workflows under github-actions/ are not manifests

    nested = tree / "teams" / "ops"
    nested.mkdir(parents=True)
    (nested / "fcmctl.yaml").write_text('project: {id: p, senderId: "1"}\ntopics:\n  b: ["b-token:APA91bxxxxxxxxxxxxxxxxxxxxxxxx"]\n  a: ["a-token:APA91bxxxxxxxxxxxxxxxxxxxxxxxx"]\n')
    check = run(["fmt", "--check", str(tree)])
    assert check.returncode == 1 and check.stdout.strip() == str(nested / "fcmctl.yaml")
    assert run(["fmt", str(tree)]).returncode == 0
    assert run(["fmt", "--check", str(tree)]).returncode == 0

    (nested / "fcmctl.yaml").write_text('project: {id: p, senderId: "1"}\ntopics:\n  "bad topic": ["x"]\n')
    broken = run(["validate", str(tree)])
    assert broken.returncode == 1 and f"1 of 7 manifests are not valid: {nested}" in broken.stderr


def test_dry_run_is_text_only():
    result = run(["apply", "--dry-run", "--format", "json", "-f", os.path.join(ROOT, "examples/quickstart")])
    assert result.returncode == 64 and "use `fcmctl plan --format json`" in result.stderr
