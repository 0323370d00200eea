"""examples/environments: a shared base included by dev and prod, each with its own project, state and devices
(prod's from a CSV device file), planned and applied by directory against one emulator: each converges, each
sends only to its own project, and the base's label-selected topics hold each environment's own devices."""
import json
import os
import shutil

from fcmharness import ROOT, Emulator, run


def test_dev_and_prod_converge_apart(tmp_path):
    tree = tmp_path / "environments"
    shutil.copytree(os.path.join(ROOT, "examples", "environments"), tree)
    emulator = Emulator()
    try:
        for environment in ("dev", "prod"):
            directory = str(tree / environment)
            seen = len(emulator.request("GET", "/emulator/v1/requests")["requests"])
            first = run(["plan", "--detailed-exitcode", "-f", directory, "--format", "json"], emulator)
            assert first.returncode == 2, first.stderr
            document = json.loads(first.stdout)
            assert document["project"] == f"acme-{environment}"
            industry = next(c for c in document["changes"] if c["address"] == "topic/industry-tech")
            assert all(name.startswith(f"{environment}-") for name in industry["added_devices"]), industry
            applied = run(["apply", "--auto-approve", "-f", directory], emulator)
            assert applied.returncode == 0, applied.stdout + applied.stderr
            assert (tree / environment / ".fcmctl" / "state.json").exists(), "the state sits beside the environment"
            assert not (tree / "base" / ".fcmctl").exists(), "never beside the shared base"
            again = run(["plan", "--detailed-exitcode", "-f", directory], emulator)
            assert again.returncode == 0, again.stdout + again.stderr
            paths = [r["path"] for r in emulator.request("GET", "/emulator/v1/requests")["requests"][seen:] if r["path"].startswith("/v1/projects/")]
            assert paths and all(p.startswith(f"/v1/projects/acme-{environment}/") for p in paths), paths
        prod = run(["plan", "-f", str(tree / "prod")], emulator)
        assert "Devices: 3 (3 from devices.csv)." in prod.stderr
        wrong = run(["plan", "-f", str(tree / "prod"), "--state", str(tree / "dev" / ".fcmctl" / "state.json")], emulator)
        assert wrong.returncode == 1 and "acme-dev" in wrong.stderr and "acme-prod" in wrong.stderr, wrong.stderr
    finally:
        emulator.stop()


def test_a_name_in_the_base_and_an_environment_is_an_error_at_both_places(tmp_path):
    tree = tmp_path / "environments"
    shutil.copytree(os.path.join(ROOT, "examples", "environments"), tree)
    with open(tree / "dev" / "fcmctl.yaml", "a") as manifest:
        manifest.write("  weather-nyc:\n    members: [dev-tablet]\n")
    result = run(["validate", "-f", str(tree / "dev")])
    assert result.returncode == 1
    assert "topic/weather-nyc is defined twice" in result.stderr
    assert "base/topics.yaml" in result.stderr and "dev/fcmctl.yaml" in result.stderr
