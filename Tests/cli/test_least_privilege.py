"""Least privilege, end to end: fcmctl signs in with a service-account key as CI does (the emulator's token
endpoint, its IAM from Google's documented FCM roles), on examples/environments. The mix-ups it must catch:
another environment's credentials, a viewer's credentials on an apply, a sender id that is not the project's.
Each ends with exit 1 naming the permission (and both projects where they differ) before anything changes."""
import json
import os
import shutil

import pytest

from fcmharness import ROOT, Emulator, FakeGCS, run
from pipelinesim.google import StorageProxy

PROD = {"prod-kiosk-nyc-1": "pK1nyc0001:APA91bProdKioskNycToken00000001",
        "prod-kiosk-nyc-2": "pK1nyc0002:APA91bProdKioskNycToken00000002",
        "prod-kiosk-lon-1": "pK1lon0001:APA91bProdKioskLonToken00000001"}
DEV_TOKEN, DEV_FID = "dK1nyc0dev:APA91bDevKioskNycToken0000000001", "dT4bLeT0dEv0fIdX0000Aa"
PROD_ACCOUNT = "fcmctl-test@acme-prod.iam.gserviceaccount.com"
MUTATING = ("topics.create", "topics.delete", "groups.mutate", "iid.batchAdd", "iid.batchRemove")


class World:
    def __init__(self, tmp_path, *flags):
        self.tree = tmp_path / "environments"
        shutil.copytree(os.path.join(ROOT, "examples", "environments"), self.tree)
        self.key = str(tmp_path / "prod-key.json")
        # The emulator's own service account is prod's: fcmctl-test@acme-prod, admin on acme-prod by default.
        self.emulator = Emulator("--strict-registrations", "--project-id", "acme-prod", "--service-account-out", self.key, *flags)
        self.emulator.request("POST", "/emulator/v1/registrations", {
            "project": "acme-prod", "sender_id": "111100000002", "registrations": [{"token": t} for t in PROD.values()]})
        self.emulator.request("POST", "/emulator/v1/registrations", {
            "project": "acme-dev", "sender_id": "111100000001", "registrations": [{"token": DEV_TOKEN}, {"fid": DEV_FID}]})
        self.env = {"FCM_ENDPOINT": self.emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": self.key, "HOME": str(tmp_path)}

    def fcmctl(self, *args):
        return run(list(args), env=self.env)

    def path(self, relative):
        return str(self.tree / relative)

    def last(self):
        return self.emulator.request("GET", "/emulator/v1/requests")["last_seq"]

    def mutations_since(self, seq):
        return [r for r in self.emulator.request("GET", "/emulator/v1/requests")["requests"] if r["seq"] > seq and r["endpoint"] in MUTATING]

    def topics(self, registration):
        return {t["name"] for t in self.emulator.request("GET", f"/emulator/v1/registrations/{registration}")["topics"]}


@pytest.fixture
def world(tmp_path):
    made = World(tmp_path)
    yield made
    made.emulator.stop()


def test_prods_credentials_on_devs_manifest_change_nothing_in_dev(world):
    applied = world.fcmctl("apply", "--auto-approve", "-f", world.path("prod"))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    seq = world.last()
    for command in (["plan"], ["apply", "--auto-approve"]):
        result = world.fcmctl(*command, "-f", world.path("dev"))
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"the credentials ({PROD_ACCOUNT}) lack the permission cloudmessaging.topicSubscriptions.list in project 'acme-dev'" in result.stderr
        assert "The manifest is for project 'acme-dev', but the credentials are an account of project 'acme-prod'" in result.stderr
        assert "could not read the subscriptions" not in result.stderr, "one refusal, not one per registration"
    assert world.mutations_since(seq) == []
    assert world.topics(DEV_TOKEN) == set()


def test_a_viewer_plans_and_reads_drift_but_cannot_apply(tmp_path):
    world = World(tmp_path, "--iam", f"{PROD_ACCOUNT}=roles/firebasecloudmessaging.viewer@acme-prod")
    try:
        prod = world.path("prod")
        planned = world.fcmctl("plan", "--detailed-exitcode", "-f", prod, "-out", world.path("p.plan"))
        assert planned.returncode == 2, planned.stdout + planned.stderr
        assert "read without a lock" in planned.stderr
        assert os.path.exists(world.path("p.plan")) and not os.path.exists(world.path("prod/.fcmctl/state.json.lock"))
        drift = world.fcmctl("drift", "-f", prod, "--format", "json")
        assert drift.returncode == 0, drift.stderr
        assert json.loads(drift.stdout)["kind"] == "drift"
        seq = world.last()
        applied = world.fcmctl("apply", "--auto-approve", "-f", prod)
        assert applied.returncode == 1, applied.stdout + applied.stderr
        assert "cloudmessaging.topicSubscriptions.create" in applied.stderr and "roles/firebasecloudmessaging.admin" in applied.stderr
        assert world.mutations_since(seq) == [] or all(r["status"] == 403 for r in world.mutations_since(seq))
        assert all(world.topics(t) == set() for t in PROD.values())
    finally:
        world.emulator.stop()


def test_a_sender_id_typo_makes_no_group(world):
    manifest = world.path("prod/fcmctl.yaml")
    with open(manifest) as handle:
        text = handle.read()
    with open(manifest, "w") as handle:
        handle.write(text.replace('senderId: "111100000002"', 'senderId: "111100000020"'))
    result = world.fcmctl("apply", "--auto-approve", "-f", world.path("prod"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FCM refused the device-group request for sender id '111100000020'" in result.stderr
    assert "Check that project.senderId is the project number of 'acme-prod'" in result.stderr
    groups = world.emulator.request("GET", "/emulator/v1/state")["groups"]
    assert groups == [], groups


def test_a_viewer_with_a_read_only_bucket_plans_and_reads_drift(tmp_path):
    """The pull request's identity: FCM viewer, and roles/storage.objectViewer on the state bucket (IAM in front
    of fake-gcs-server). plan, plan -out and drift read and never write; apply is refused at the bucket."""
    world = World(tmp_path, "--iam", f"{PROD_ACCOUNT}=roles/firebasecloudmessaging.viewer@acme-prod")
    gcs = FakeGCS()
    proxy = None
    try:
        gcs.create_bucket("acme-state")
        proxy = StorageProxy(gcs.base, f"{world.emulator.base}/tokeninfo", [(PROD_ACCOUNT, "roles/storage.objectViewer", None)]).start()
        world.env["FCMCTL_STORAGE_ENDPOINT"] = proxy.base
        state = ["--state", "gs://acme-state/fcmctl/prod"]
        prod = world.path("prod")
        planned = world.fcmctl("plan", "--detailed-exitcode", "-f", prod, *state, "-out", world.path("p.plan"))
        assert planned.returncode == 2, planned.stdout + planned.stderr
        assert "State: gs://acme-state/fcmctl/prod (none yet), read without a lock." in planned.stderr
        drift = world.fcmctl("drift", "-f", prod, *state)
        assert drift.returncode == 0, drift.stdout + drift.stderr
        writes = [e for e in proxy.log if e["permission"] not in ("storage.objects.get", "storage.objects.list")]
        assert writes == [], writes
        assert proxy.log and all(e["allowed"] for e in proxy.log)
        applied = world.fcmctl("apply", "--auto-approve", "-f", prod, *state)
        assert applied.returncode == 1, applied.stdout + applied.stderr
        assert "The credentials lack storage.objects.create, which roles/storage.objectUser on the bucket grants" in applied.stderr
        assert gcs.names("acme-state") == []
        assert all(world.topics(t) == set() for t in PROD.values())
    finally:
        if proxy:
            proxy.stop()
        gcs.stop()
        world.emulator.stop()
