"""One rule for the project id when the manifest names none, in validate, plan and send alike: GOOGLE_CLOUD_PROJECT,
then GCLOUD_PROJECT (a variable set to nothing is unset), then the project_id of the key
GOOGLE_APPLICATION_CREDENTIALS names, read without parsing its private key."""
import json

from fcmharness import Emulator, run

MANIFEST = ('apiVersion: fcmctl/v1\nproject: {senderId: "1"}\n'
            "devices:\n  k: {token: 'k:APA91bxxxxxxxxxxxxxxxxxxxxxxxx', labels: {role: kiosk}}\n"
            "topics:\n  news: {members: {selector: {role: kiosk}}}\n")


def plan_project(tmp_path, env):
    emulator = Emulator()
    try:
        plan = run(["plan", "--verbose", "-f", str(tmp_path), "--state", str(tmp_path / "s.json")], emulator, env)
    finally:
        emulator.stop()
    line = next((l for l in plan.stderr.splitlines() if l.startswith("Credentials:")), "")
    return plan, line.split("Project: ")[1].split(".")[0] if "Project: " in line else None


def test_an_empty_variable_is_unset_in_validate_and_plan_alike(tmp_path):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    env = {"GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": "p2"}
    validate = run(["validate", "-f", str(tmp_path)], env=env)
    assert validate.returncode == 0, validate.stderr
    plan, project = plan_project(tmp_path, env)
    assert plan.returncode == 0, plan.stderr
    assert project == "p2", plan.stderr


def test_the_key_files_project_id_is_read_without_its_private_key(tmp_path):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"type": "service_account", "project_id": "from-key", "private_key": "not a PEM at all",
                               "client_email": "a@from-key.iam.gserviceaccount.com"}))
    env = {"GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": "", "GOOGLE_APPLICATION_CREDENTIALS": str(key)}
    validate = run(["validate", "-f", str(tmp_path)], env=env)
    assert validate.returncode == 0, validate.stderr
    plan, project = plan_project(tmp_path, env)
    assert project == "from-key", plan.stderr


def test_no_project_anywhere_is_refused_by_validate_as_plan_would(tmp_path):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    env = {"GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": "", "GOOGLE_APPLICATION_CREDENTIALS": ""}
    validate = run(["validate", "-f", str(tmp_path)], env=env)
    assert validate.returncode == 1
    assert "topics need a project id" in validate.stderr
