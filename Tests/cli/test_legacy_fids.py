"""FIDs on the legacy APIs. Google documents FIDs on the v1 send and Topic Subscription APIs only; the device-group
and Instance ID pages name registration tokens, and no source says FCM takes a FID there. So fcm-emulator
answers a FID there as FCM answers a string that is not a registration token: INVALID_ARGUMENT for it in an
IID batch, 400 InvalidToken from iid/info and rel/topics, dropped from a device-group request like any
invalid token ("no valid registration ids" when nothing else is left) with `--no-accept-legacy-fids`. By default
(`--accept-legacy-fids`) it takes them, as it always did: both are guesses."""
import json
import urllib.error
import urllib.request

from fcmharness import Emulator

FID = "cR1rjyj4_KcAPA91bGusQ2"
TOKEN = "fGw0qy4TGgk:APA91b" + "w" * 40
SENDER = "555500000123"


def answer(emulator, method, path, body=None, headers=None):
    """(status, JSON body) of an FCM request made as the `owner` token, errors included."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        emulator.base + path, data=data, method=method,
        headers={"Content-Type": "application/json", "Authorization": "Bearer owner", "access_token_auth": "true", **(headers or {})})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def started(*flags):
    emulator = Emulator("--strict-registrations", *(flags or ("--no-accept-legacy-fids",)))
    emulator.request("POST", "/emulator/v1/registrations",
                     {"project": "legacy", "sender_id": SENDER, "registrations": [{"fid": FID}, {"token": TOKEN}]})
    return emulator


def group(emulator, operation, members, key=None):
    body = {"operation": operation, "notification_key_name": "family", "registration_ids": members}
    if key:
        body["notification_key"] = key
    return answer(emulator, "POST", "/fcm/notification", body, {"project_id": SENDER})


def members(emulator):
    return next((g["members"] for g in emulator.request("GET", "/emulator/v1/state")["groups"] if g["name"] == "family"), None)


def test_a_fid_is_no_registration_token_to_the_legacy_apis():
    emulator = started()
    try:
        batch = {"to": "/topics/news", "registration_tokens": [FID, TOKEN]}
        assert answer(emulator, "POST", "/iid/v1:batchAdd", batch) == (200, {"results": [{"error": "INVALID_ARGUMENT"}, {}]})
        assert answer(emulator, "POST", "/iid/v1:batchRemove", batch) == (200, {"results": [{"error": "INVALID_ARGUMENT"}, {}]})
        assert answer(emulator, "GET", f"/iid/info/{FID}?details=true") == (400, {"error": "InvalidToken"})
        assert answer(emulator, "POST", f"/iid/v1/{FID}/rel/topics/news", {}) == (400, {"error": "InvalidToken"})

        # Dropped from a group like an invalid token; alone, nothing valid is left.
        assert group(emulator, "create", [FID]) == (400, {"error": "no valid registration ids"})
        status, created = group(emulator, "create", [FID, TOKEN])
        assert status == 200 and created["notification_key"], created
        assert members(emulator) == [TOKEN]
        assert group(emulator, "add", [FID], created["notification_key"]) == (400, {"error": "no valid registration ids"})
        assert members(emulator) == [TOKEN]

        # The v1 APIs take it, as documented.
        status, _ = answer(emulator, "POST", f"/v1/projects/legacy/registrations/{FID}/topicSubscriptions?topicName=news", {})
        assert status == 200
        registration = next(r for r in emulator.request("GET", "/emulator/v1/state")["registrations"] if r["id"] == FID)
        assert list(registration["topics"]) == ["news"]
    finally:
        emulator.stop()


def test_accept_legacy_fids_takes_them():
    emulator = started("--accept-legacy-fids")
    try:
        batch = {"to": "/topics/news", "registration_tokens": [FID, TOKEN]}
        assert answer(emulator, "POST", "/iid/v1:batchAdd", batch) == (200, {"results": [{}, {}]})
        status, info = answer(emulator, "GET", f"/iid/info/{FID}?details=true")
        assert status == 200 and list(info["rel"]["topics"]) == ["news"], info
        status, _ = group(emulator, "create", [FID, TOKEN])
        assert status == 200 and members(emulator) == [FID, TOKEN]
    finally:
        emulator.stop()
