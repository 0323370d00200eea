"""A pull request controls every file of the repository, and a plan job prints what it reads: manifests,
includes and device files are read only inside the repository (the directory holding .git, or the first -f's
directory when there is none). `..` out of it, absolute paths and symbolic links leaving it are refused by
name, before they are read; nothing of their content reaches any output. `--allow-outside-paths` lifts it."""
import json
import os

from fcmharness import Emulator, run

SECRET = "hunter2-SECRET-VALUE"
PRIVATE = "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
KEY = json.dumps({"type": "service_account", "project_id": "p", "private_key": PRIVATE, "client_email": "a@p.iam.gserviceaccount.com"})
HEAD = 'apiVersion: fcmctl/v1\nproject: {id: p, senderId: "1"}\n'
TOPIC = "topics:\n  news: {members: {selector: {role: kiosk}}}\n"
FORMATS = ("text", "github", "json", "markdown")


def layout(tmp_path):
    """tmp_path/repo is the checkout; tmp_path/outside holds what a runner keeps beside it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "fcm").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.csv").write_text(f"name,token,labels.role\nSECRET_DB_PASSWORD={SECRET},x:APA91bxxxxxxxxxxxxxxxxxxxxxx,kiosk\n")
    (outside / "secret.yaml").write_text(f"password: {SECRET}\n")
    (outside / "key.json").write_text(KEY)
    return repo, outside


def every_output(repo):
    """validate in three formats and plan in four, against a real emulator."""
    emulator = Emulator()
    try:
        runs = [run(["validate", "-f", str(repo / "fcm"), "--format", fmt]) for fmt in ("text", "github", "json")]
        return runs + [run(["plan", "-f", str(repo / "fcm"), "--state", str(repo / "s.json"), "--format", fmt], emulator) for fmt in FORMATS]
    finally:
        emulator.stop()


def assert_refused(runs, needle):
    for result in runs:
        assert result.returncode == 1, result.stdout + result.stderr
        both = result.stdout + result.stderr
        assert SECRET not in both and "BEGIN PRIVATE KEY" not in both, both
        assert needle in both, both


def test_a_device_file_outside_the_repository_is_refused_unread(tmp_path):
    repo, _ = layout(tmp_path)
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + "deviceFiles: [../../outside/app.csv]\n" + TOPIC)
    runs = every_output(repo)
    assert_refused(runs, "is outside the repository")
    text = runs[0].stderr
    assert f"fcm/fcmctl.yaml:3:15: error: deviceFiles: ../../outside/app.csv is outside the repository ({repo}, " \
        "the directory holding .git)" in text, text
    assert "--allow-outside-paths" in text


def test_absolute_paths_and_includes_leaving_the_repository_are_refused(tmp_path):
    repo, outside = layout(tmp_path)
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + f"include: [../../outside]\ndeviceFiles: [{outside}/app.csv]\n" + TOPIC)
    runs = every_output(repo)
    assert_refused(runs, "is outside the repository")
    text = runs[0].stderr
    assert "error: include: " in text and "error: deviceFiles: " in text, text
    annotations = runs[1].stdout
    assert annotations.count("::error file=") >= 2 and SECRET not in annotations


def test_symbolic_links_that_leave_the_repository_are_refused(tmp_path):
    repo, outside = layout(tmp_path)
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + "deviceFiles: [k.jsonl]\n" + TOPIC)
    os.symlink(outside / "key.json", repo / "fcm" / "k.jsonl")
    os.symlink(outside / "secret.yaml", repo / "fcm" / "z-more.yaml")  # a manifest of the directory -f reads
    runs = every_output(repo)
    assert_refused(runs, "is a symbolic link that leads outside the repository")
    text = runs[0].stderr
    assert "k.jsonl is a symbolic link" in text and "z-more.yaml is a symbolic link" in text, text


def test_a_symbolic_link_inside_the_repository_quotes_no_line_of_a_file_that_is_not_yaml(tmp_path):
    """google-github-actions/auth writes the credentials file into the workspace: a link to a file inside the
    repository is followed, but a device file's errors name only the field at fault, never its line."""
    repo, _ = layout(tmp_path)
    (repo / "gha-creds.json").write_text(KEY)
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + "deviceFiles: [k.jsonl]\n" + TOPIC)
    os.symlink(repo / "gha-creds.json", repo / "fcm" / "k.jsonl")
    runs = every_output(repo)
    assert_refused(runs, "unknown key 'private_key'")


def test_an_include_that_is_not_yaml_is_refused_without_reading_it(tmp_path):
    repo, _ = layout(tmp_path)
    (repo / ".env").write_text(f"DB_PASSWORD={SECRET}\n")
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + "include: [../.env]\n" + TOPIC + "devices:\n  k: {token: 'k:APA91bxxxxxxxxxxxxxxxxx', labels: {role: kiosk}}\n")
    result = run(["validate", "-f", str(repo / "fcm")])
    assert result.returncode == 1 and SECRET not in result.stdout + result.stderr
    assert "include: ../.env is not a *.yaml or *.yml file" in result.stderr, result.stderr


def test_without_git_the_first_manifest_directory_is_the_boundary(tmp_path):
    tree = tmp_path / "tree"
    (tree / "base").mkdir(parents=True)
    (tree / "prod").mkdir()
    (tree / "base" / "topics.yaml").write_text(TOPIC + "devices:\n  k: {token: 'k:APA91bxxxxxxxxxxxxxxxxx', labels: {role: kiosk}}\n")
    (tree / "prod" / "fcmctl.yaml").write_text(HEAD + "include: [../base]\n")
    os.rmdir(tmp_path / ".git")  # the suite's checkout: this test is about its absence
    refused = run(["validate", "-f", str(tree / "prod")])
    assert refused.returncode == 1
    assert f"is outside the repository ({tree}/prod, the first -f's directory; no .git above it)" in refused.stderr, refused.stderr
    (tree / ".git").mkdir()
    accepted = run(["validate", "-f", str(tree / "prod")])
    assert accepted.returncode == 0, accepted.stderr


def test_allow_outside_paths_reads_them_for_a_local_run(tmp_path):
    repo, outside = layout(tmp_path)
    (outside / "app.csv").write_text("name,token,labels.role\nk1,k1:APA91bxxxxxxxxxxxxxxxxxxxxxx,kiosk\n")
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + "deviceFiles: [../../outside/app.csv]\n" + TOPIC)
    refused = run(["validate", "-f", str(repo / "fcm")])
    assert refused.returncode == 1
    allowed = run(["validate", "-f", str(repo / "fcm"), "--allow-outside-paths"])
    assert allowed.returncode == 0, allowed.stderr
    assert "1 device" in allowed.stdout and "1 subscription" in allowed.stdout, allowed.stdout
    emulator = Emulator()
    try:
        plan = run(["plan", "-f", str(repo / "fcm"), "--allow-outside-paths", "--state", str(repo / "s.json")], emulator)
    finally:
        emulator.stop()
    assert plan.returncode == 0 and "topic/news" in plan.stdout, plan.stdout + plan.stderr


def test_a_device_line_over_a_mebibyte_is_refused_at_its_line(tmp_path):
    repo, _ = layout(tmp_path)
    (repo / "fcm" / "fcmctl.yaml").write_text(HEAD + "deviceFiles: [a.jsonl, b.csv]\n" + TOPIC)
    long_name = "n" * (3 * 1_048_576)
    (repo / "fcm" / "a.jsonl").write_text(
        '{"name": "k1", "token": "k1:APA91bxxxxxxxxxxxxxxxxxxxxxx", "labels": {"role": "kiosk"}}\n'
        + json.dumps({"name": long_name, "token": "k2:APA91bxxxxxxxxxxxxxxxxxxxxxx"}) + "\n")
    (repo / "fcm" / "b.csv").write_text(f"name,token\nk3,k3:APA91bxxxxxxxxxxxxxxxxxxxxxx\n{long_name},k4:APA91bxxxxxxxxxxxxxxxxxxxxxx\n")
    result = run(["validate", "-f", str(repo / "fcm")])
    assert result.returncode == 1
    assert "a.jsonl:2:1: error: the line is 3 MiB long, more than the 1 MiB a device's line may be" in result.stderr, result.stderr[:2000]
    assert "b.csv:3:1: error: the line is longer than 1 MiB, more than the 1 MiB a device's line may be" in result.stderr, result.stderr[:2000]
    assert len(result.stderr) < 4000
