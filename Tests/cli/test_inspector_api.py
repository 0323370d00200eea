"""What the inspector reads, without a browser: the page at `/` (and the metadata root kept for
`Metadata-Flavor` requests), health, the paged listings, the request log's filters, the principals and their
roles, and export/import with its versions."""
import json
import os
import signal
import subprocess
import urllib.error
import urllib.request

from fcmharness import EMULATOR, ROOT, Emulator


def raw(emulator, path, headers=None, method="GET", data=None):
    request = urllib.request.Request(emulator.base + path, headers=headers or {}, method=method, data=data)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_browser_gets_the_page_and_the_metadata_ping_still_gets_the_metadata_root():
    emulator = Emulator()
    try:
        status, headers, body = raw(emulator, "/")
        assert status == 200 and headers["Content-Type"].startswith("text/html"), headers
        assert b'<script src="/emulator/ui/inspector.js">' in body and b'<script src="/emulator/ui/actions.js">' in body
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        for path, kind in [("/emulator/ui/inspector.js", "text/javascript"), ("/emulator/ui/actions.js", "text/javascript"),
                           ("/emulator/ui/inspector.css", "text/css")]:
            status, headers, body = raw(emulator, path)
            assert status == 200 and headers["Content-Type"].startswith(kind) and body, path
            assert "script-src 'self'" in headers["Content-Security-Policy"] and headers["X-Content-Type-Options"] == "nosniff", path
        status, headers, body = raw(emulator, "/", {"Metadata-Flavor": "Google"})
        assert (status, headers.get("Metadata-Flavor"), body) == (200, "Google", b"computeMetadata/\n")
        status, _, body = raw(emulator, "/emulator/v1/health")
        assert status == 200 and json.loads(body)["status"] == "ok"
        logged = [r["endpoint"] for r in emulator.request("GET", "/emulator/v1/requests")["requests"]]
        assert logged == ["metadata"], "the page and the admin API are not logged; the metadata server is"
    finally:
        emulator.stop()


def test_the_embedded_page_is_the_one_in_inspector():
    checked = subprocess.run(["bash", os.path.join(ROOT, "scripts", "embed-inspector.sh"), "--check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    script = open(os.path.join(ROOT, "inspector", "inspector.js")).read()
    endpoints = subprocess.run([EMULATOR, "--error-rate", "nonsense:503=1"], capture_output=True, text=True).stderr
    for name in endpoints.split("known: ")[1].splitlines()[0].split(", "):
        assert f'"{name.strip()}"' in script, f"the page's endpoint list lacks {name.strip()}"


def test_version_and_default_port():
    version = subprocess.run([EMULATOR, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("fcm-emulator 0.1.0"), version.stdout
    usage = subprocess.run([EMULATOR, "--help"], capture_output=True, text=True).stdout
    assert "(default: 9595)" in usage


def tokens(count):
    return [f"page{i:04d}:APA91b" + "q" * 20 for i in range(count)]


def test_listings_page_through_everything_once():
    emulator = Emulator("--strict-registrations")
    try:
        registered = tokens(120)
        emulator.request("POST", "/emulator/v1/registrations",
                         {"project": "acme", "sender_id": "42", "registrations": [{"token": t, "app": "com.acme.a" if i % 2 else "com.acme.b"}
                                                                                 for i, t in enumerate(registered)]})
        for i, token in enumerate(registered):
            emulator.subscribe("acme", token, "all")
            if i % 3 == 0:
                emulator.subscribe("acme", token, f"third-{i % 2}")
        seen, token = [], ""
        while True:
            page = emulator.request("GET", f"/emulator/v1/registrations?page_size=50&page_token={token}")
            assert page["total"] == 120
            seen += [r["id"] for r in page["registrations"]]
            token = page.get("next_page_token")
            if not token:
                break
        assert seen == sorted(registered)
        odd = emulator.request("GET", "/emulator/v1/registrations?page_size=1000&q=app:com.acme.a")["registrations"]
        assert len(odd) == 60
        third = emulator.request("GET", "/emulator/v1/registrations?page_size=1000&q=topic:third-0%20APP:COM.ACME.B")["registrations"]
        assert [r["id"] for r in third] == sorted(t for i, t in enumerate(registered) if i % 6 == 0)
        topics = emulator.request("GET", "/emulator/v1/topics")
        assert [(t["name"], t["project"], t["subscribers"]) for t in topics["topics"]] == [("all", "acme", 120), ("third-0", "acme", 20), ("third-1", "acme", 20)]
        subscribers, token = [], ""
        while True:
            page = emulator.request("GET", f"/emulator/v1/topics/all/subscribers?project=acme&page_size=7&page_token={token}")
            subscribers += [s["id"] for s in page["subscribers"]]
            token = page.get("next_page_token")
            if not token:
                break
        assert subscribers == sorted(registered)
        detail = emulator.request("GET", f"/emulator/v1/registrations/{registered[0]}")
        assert [t["name"] for t in detail["topics"]] == ["all", "third-0"]
        emulator.uninstall(registered[0])
        assert emulator.request("GET", "/emulator/v1/topics/all/subscribers?project=acme")["total"] == 119
        assert emulator.stats()["subscriptions"] == 119 + 40 - 1
    finally:
        emulator.stop()


def test_the_request_log_filters_and_tails():
    emulator = Emulator("--strict-registrations")
    try:
        known, unknown = tokens(2)
        emulator.register(known)
        emulator.subscribe("acme", known, "news")
        try:
            emulator.subscribe("acme", unknown, "news")
        except urllib.error.HTTPError as error:
            assert error.code == 404
        everything = emulator.request("GET", "/emulator/v1/requests")
        assert [r["seq"] for r in everything["requests"]] == [1, 2] and everything["last_seq"] == 2
        assert [r["status"] for r in emulator.request("GET", "/emulator/v1/requests?status=4xx")["requests"]] == [404]
        assert [r["seq"] for r in emulator.request("GET", f"/emulator/v1/requests?registration={known}")["requests"]] == [1]
        assert emulator.request("GET", "/emulator/v1/requests?after=2")["requests"] == []
        assert [r["seq"] for r in emulator.request("GET", "/emulator/v1/requests?limit=1")["requests"]] == [2]
        assert unknown not in json.dumps(everything), "registrations stay redacted"
    finally:
        emulator.stop()


def test_principals_are_listed_with_their_projects_roles_and_refusals():
    emulator = Emulator("--strict-registrations", "--project-id", "acme", "--accept-token", "ci-token=planner@ci.iam.gserviceaccount.com",
                        "--iam", "planner@ci.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@acme")
    try:
        (known,) = tokens(1)
        emulator.request("POST", "/emulator/v1/registrations", {"project": "acme", "sender_id": "42", "registrations": [{"token": known}]})
        path = f"/v1/projects/acme/registrations/{known}/topicSubscriptions"
        status, _, body = raw(emulator, path + "?topicName=news", {"Authorization": "Bearer ci-token"}, method="POST", data=b"{}")
        assert status == 403, body
        detail = json.loads(body)["error"]["details"][0]
        assert (detail["reason"], detail["metadata"]["permission"]) == ("IAM_PERMISSION_DENIED", "cloudmessaging.topicSubscriptions.create")
        assert raw(emulator, path, {"Authorization": "Bearer ci-token"})[0] == 200
        refused = emulator.request("GET", "/emulator/v1/requests?status=403")["requests"]
        assert [r["principal"] for r in refused] == ["serviceAccount:planner@ci.iam.gserviceaccount.com"]

        listing = emulator.request("GET", "/emulator/v1/principals")
        assert listing["default"] == "own-project" and listing["unrestricted"] == ["the owner token"]
        rows = {row["member"]: row for row in listing["principals"]}
        planner = rows["serviceAccount:planner@ci.iam.gserviceaccount.com"]
        assert planner["project"] == "ci" and planner["sources"] == ["--accept-token", "--iam"]
        assert {(r["project"], r["role"], r["from"]) for r in planner["roles"]} == {
            ("ci", "roles/firebasecloudmessaging.admin", "default"), ("acme", "roles/firebasecloudmessaging.viewer", "--iam")}
        metadata = rows["serviceAccount:123456789012-compute@developer.gserviceaccount.com"]
        assert metadata["project"] == "acme" and metadata["sources"] == ["metadata server"]
        assert listing["roles"]["roles/firebasecloudmessaging.viewer"] == [
            "cloudmessaging.topicSubscriptions.get", "cloudmessaging.topicSubscriptions.list"]
        guesses = {row["endpoint"] for row in listing["permissions"] if not row["documented"]}
        assert guesses == {"iid.batchAdd", "iid.batchRemove", "iid.info", "iid.relation", "groups.mutate", "groups.get", "groups.export"}
    finally:
        emulator.stop()


def test_export_import_round_trips_and_older_or_foreign_files_are_read_or_refused(tmp_path):
    first = Emulator("--strict-registrations")
    try:
        first.request("POST", "/emulator/v1/registrations",
                      {"project": "acme", "sender_id": "42", "registrations": [{"token": t} for t in tokens(3)]})
        first.subscribe("acme", tokens(1)[0], "news")
        first.request("POST", "/fcm/notification", {"operation": "create", "notification_key_name": "family", "registration_ids": tokens(2)},
                      headers={"project_id": "42"})
        first.request("POST", "/v1/projects/acme/messages:send",
                      {"message": {"token": tokens(1)[0], "android": {"notification": {"notification_count": 1}}}})
        first.request("PUT", "/emulator/v1/clock", {"now": "2027-01-02", "new_project": True})
        _, _, exported = raw(first, "/emulator/v1/export")
        key = first.request("GET", "/fcm/notification?notification_key_name=family", headers={"project_id": "42"})["notification_key"]
    finally:
        first.stop()
    document = json.loads(exported)
    assert document["version"] == 2 and document["clock"] == {"new_project": True, "now": "2027-01-02T00:00:00.000Z"}
    assert document["registrations"][0]["inbox"][0]["message"]["android"]["notification"]["notification_count"] == 1

    second = Emulator("--strict-registrations")
    try:
        answer = second.request("POST", "/emulator/v1/import", json.loads(exported))
        assert answer == {"groups": 1, "registrations": 3, "subscriptions": 1}
        _, _, again = raw(second, "/emulator/v1/export")
        assert json.loads(again)["registrations"] == document["registrations"]
        assert again.split(b'"format"')[1] == exported.split(b'"format"')[1], "the same bytes after the build's name"
        # A notification key handed out before the export still names the group.
        second.request("POST", "/fcm/notification",
                       {"operation": "add", "notification_key_name": "family", "notification_key": key, "registration_ids": tokens(3)[2:]},
                       headers={"project_id": "42"})
        state = raw(second, "/emulator/v1/state")[2]
        status, _, refusal = raw(second, "/emulator/v1/import", {"Content-Type": "application/json"}, method="POST", data=state)
        assert status == 400 and b"GET /emulator/v1/export" in refusal
        newer = json.dumps({"format": "fcm-emulator-export", "version": 99}).encode()
        status, _, refusal = raw(second, "/emulator/v1/import", {"Content-Type": "application/json"}, method="POST", data=newer)
        assert status == 400 and b"format version 99" in refusal and b"reads versions 1 to 2" in refusal
    finally:
        second.stop()

    # --state-file files of the version before (1) load, with their groups and subscriptions.
    old = {"version": 1, "senders": {"42": "acme"}, "nextGroupID": 5,
           "registrations": {tokens(1)[0]: {"kind": "token", "topics": {"news": "2026-01-01T00:00:00Z"}, "uninstalled": False,
                                            "platform": "IOS", "app": "com.acme", "inbox": [], "project": "acme"}},
           "groups": [{"name": {"senderId": "42", "name": "family"}, "record": {"id": 4, "members": [tokens(1)[0]]}}]}
    (tmp_path / "old.json").write_text(json.dumps(old))
    loaded = Emulator("--strict-registrations", "--state-file", str(tmp_path / "old.json"))
    try:
        assert loaded.request("GET", "/emulator/v1/topics")["topics"] == [{"name": "news", "project": "acme", "subscribers": 1}]
        assert loaded.request("GET", "/emulator/v1/groups")["groups"][0]["members"] == [tokens(1)[0]]
    finally:
        loaded.stop()

    # --export-on-exit writes on SIGTERM; --import reads it.
    directory = tmp_path / "saved"
    process = subprocess.Popen([EMULATOR, "--port", "0", "--import", str(tmp_path / "missing")], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.wait(timeout=30) != 0 and "no fcm-emulator-export.json there" in process.stderr.read()
    exporting = Emulator("--strict-registrations", "--export-on-exit", str(directory))
    exporting.request("POST", "/emulator/v1/import", json.loads(exported))
    exporting.process.send_signal(signal.SIGTERM)
    exporting.process.wait(timeout=30)
    written = (directory / "fcm-emulator-export.json").read_bytes()
    assert written.split(b'"format"')[1] == exported.split(b'"format"')[1]
    imported = Emulator("--strict-registrations", "--import", str(directory))
    try:
        assert imported.stats()["registrations"] == 3
        assert imported.request("GET", "/emulator/v1/clock")["now"].startswith("2027-01-02")
    finally:
        imported.stop()
