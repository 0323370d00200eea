"""messages:send against Google's contract (the FCM v1 discovery document plus FCM's documented rules).

Each malformed body is sent twice: over raw HTTP, where the answer must be Google's shape (400, an FcmError
detail and a google.rpc.BadRequest naming the field), and through firebase-admin's own send path, which must
raise InvalidArgumentError. firebase-admin's Message objects cannot carry unknown fields or wrong types, so
for the raw bodies only the SDK's encoding step is replaced; everything after it (auth, headers, transport,
error mapping) is the SDK's. The cases firebase-admin can express itself are also sent as real Messages.
"""
import json
import urllib.error
import urllib.request

import firebase_admin.exceptions
import google.auth.credentials
import pytest
from firebase_admin import messaging

from test_firebase_admin import PROJECT, Emulator

TOKEN = "contract:APA91b" + "x" * 40
BIG = "x" * 4100


def msg(**fields):
    """A message to a topic unless the fields bring their own target."""
    fields = {"topic": "news", **fields} if not {"token", "topic", "condition", "fid"} & fields.keys() else fields
    return {"message": fields}


# (case, body, field the BadRequest violation names (None: the request root), words its description has)
MALFORMED = [
    ("unknown at the root", {**msg(), "foo": 1}, None, 'Unknown name "foo": Cannot find field.'),
    ("unknown in message", msg(tokens=["a"]), "message", 'Unknown name "tokens"'),
    ("unknown in notification", msg(notification={"click_action": "x"}), "message.notification", 'Unknown name "click_action"'),
    ("unknown in android.notification", msg(android={"notification": {"clickActions": "x"}}),
     "message.android.notification", 'Unknown name "clickActions"'),
    ("unknown in apns.fcm_options", msg(apns={"fcm_options": {"link": "https://x"}}), "message.apns.fcm_options", 'Unknown name "link"'),
    ("unknown in webpush.fcmOptions", msg(webpush={"fcmOptions": {"image": "https://x"}}), "message.webpush.fcm_options",
     'Unknown name "image"'),
    ("unknown in light_settings", msg(android={"notification": {"light_settings": {"colour": {}}}}),
     "message.android.notification.light_settings", 'Unknown name "colour"'),
    ("unknown in light_settings.color", msg(android={"notification": {"lightSettings": {"color": {"hex": "#fff"}}}}),
     "message.android.notification.light_settings.color", 'Unknown name "hex"'),
    ("enum android.priority", msg(android={"priority": "urgent"}), "message.android.priority",
     '(type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), "urgent"'),
    ("enum visibility", msg(android={"notification": {"visibility": "HIDDEN"}}), "message.android.notification.visibility", '"HIDDEN"'),
    ("enum notification_priority", msg(android={"notification": {"notification_priority": "URGENT"}}),
     "message.android.notification.notification_priority", '"URGENT"'),
    ("enum proxy", msg(android={"notification": {"proxy": "SOMETIMES"}}), "message.android.notification.proxy", '"SOMETIMES"'),
    ("int32 as text", msg(android={"notification": {"notification_count": "abc"}}),
     "message.android.notification.notification_count", '(TYPE_INT32), "abc"'),
    ("int32 with a fraction", msg(android={"notification": {"notificationCount": 1.5}}),
     "message.android.notification.notification_count", "(TYPE_INT32), 1.5"),
    ("data value a number", msg(data={"n": 12}), "message.data[0].value", "(TYPE_STRING), 12"),
    ("string field a bool", msg(notification={"title": True}), "message.notification.title", "(TYPE_STRING), true"),
    ("bool field a word", msg(android={"direct_boot_ok": "yes"}), "message.android.direct_boot_ok", '(TYPE_BOOL), "yes"'),
    ("duration without s", msg(android={"ttl": "10m"}), "message.android.ttl", "duration must end with 's'"),
    ("duration a number", msg(android={"ttl": 3600}), "message.android.ttl", "Invalid data type for duration"),
    ("timestamp in words", msg(android={"notification": {"event_time": "yesterday"}}), "message.android.notification.event_time",
     "Invalid time format"),
    ("float as a word", msg(android={"notification": {"light_settings": {"color": {"red": "bright"}}}}),
     "message.android.notification.light_settings.color.red", '(TYPE_FLOAT), "bright"'),
    ("message field a string", msg(notification="hello"), "message.notification",
     '(type.googleapis.com/google.firebase.fcm.v1.Notification), "hello"'),
    ("message field a list", msg(notification=[{"title": "t"}]), "message", "Proto field is not repeating, cannot start list."),
    ("scalar field an object", msg(notification={"title": {"text": "t"}}), "message.notification", "Starting an object on a scalar field"),
    ("struct a string", msg(apns={"payload": "aps"}), "message.apns.payload", "(type.googleapis.com/google.protobuf.Struct)"),
    ("topic and token", msg(topic="news", token=TOKEN), "message", "oneof field 'target' is already set. Cannot set 'token'"),
    ("condition and fid", msg(condition="'a' in topics", fid="cR1rjyj4_KcAPA91bGusQ2"), "message", "Cannot set 'fid'"),
    ("android and androidV2", msg(android={}, androidV2={}), "message.android_v2", "mutually exclusive"),
    ("data-only with apns-priority 10", msg(data={"k": "v"}, apns={"headers": {"apns-priority": "10"}}), "message.apns.headers",
     "apns-priority 5"),
    ("webpush link over http", msg(webpush={"fcm_options": {"link": "http://example.com"}}), "message.webpush.fcm_options.link", "HTTPS"),
    ("android color a name", msg(android={"notification": {"color": "red"}}), "message.android.notification.color", "#rrggbb"),
    ("android_v2 color too short", msg(androidV2={"remoteNotification": {"notification": {"color": "#12345"}}}),
     "message.android_v2.remote_notification.notification.color", "#rrggbb"),
    ("oversized android.data", msg(token=TOKEN, android={"data": {"k": BIG}}), "message.android.data", "the limit is 4096"),
    ("oversized webpush.data to a topic", msg(webpush={"data": {"k": "x" * 2100}}), "message.webpush.data", "the limit is 2048"),
    ("reserved key in android.data", msg(android={"data": {"google.sent_time": "1"}}), "message.android.data",
     "Invalid data key 'google.sent_time'"),
]
assert len(MALFORMED) >= 30


@pytest.fixture
def emulator(tmp_path, monkeypatch):
    instance = Emulator(tmp_path)
    monkeypatch.setattr(
        google.auth.credentials.CredentialsWithRegionalAccessBoundary,
        "_is_regional_access_boundary_lookup_required", lambda self: False)
    yield instance
    instance.stop()


def post(emulator, body):
    request = urllib.request.Request(
        f"{emulator.base}/v1/projects/{PROJECT}/messages:send", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


class Raw:
    """A body firebase-admin sends as it is (see raw_sends)."""
    def __init__(self, body):
        self.body = body


@pytest.fixture
def raw_sends(monkeypatch):
    original = messaging._MessagingService._message_data
    monkeypatch.setattr(messaging._MessagingService, "_message_data",
                        lambda self, message, dry_run: message.body if isinstance(message, Raw) else original(self, message, dry_run))


@pytest.mark.parametrize("case,body,field,words", MALFORMED, ids=[case[0] for case in MALFORMED])
def test_raw_http_gets_a_bad_request_naming_the_field(emulator, case, body, field, words):
    status, answer = post(emulator, body)
    assert status == 400, answer
    error = answer["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    details = {detail["@type"]: detail for detail in error["details"]}
    assert details["type.googleapis.com/google.firebase.fcm.v1.FcmError"]["errorCode"] == "INVALID_ARGUMENT"
    violations = details["type.googleapis.com/google.rpc.BadRequest"]["fieldViolations"]
    assert [v.get("field") for v in violations] == [field], violations
    assert words in violations[0]["description"] and violations[0]["description"] in error["message"]


def sends(emulator):
    return emulator.admin("GET", "/emulator/v1/stats")["endpoints"].get("messages.send", {}).get("by_status", {})


def test_firebase_admin_raises_invalid_argument_for_each(emulator, raw_sends):
    app = emulator.app()
    for case, body, field, words in MALFORMED:
        with pytest.raises(firebase_admin.exceptions.InvalidArgumentError) as raised:
            messaging.send(Raw(body), app=app)
        assert words in str(raised.value), case
    assert sends(emulator) == {"400": len(MALFORMED)}


def test_what_firebase_admin_can_express_itself_is_refused_by_the_server(emulator):
    app = emulator.app()
    reach_the_server = [
        messaging.Message(topic="news", data={"k": "v"}, apns=messaging.APNSConfig(headers={"apns-priority": "10"})),
        messaging.Message(token=TOKEN, android=messaging.AndroidConfig(data={"k": BIG})),
        messaging.Message(topic="news", android=messaging.AndroidConfig(data={"from": "me"})),
        messaging.Message(topic="news", notification=messaging.Notification(image="not a url")),
    ]
    for message in reach_the_server:
        with pytest.raises(firebase_admin.exceptions.InvalidArgumentError):
            messaging.send(message, dry_run=True, app=app)
    # The SDK refuses these itself (ValueError) and sends nothing.
    refused_by_the_sdk = [
        messaging.Message(topic="news", android=messaging.AndroidConfig(priority="urgent")),
        messaging.Message(topic="news", android=messaging.AndroidConfig(notification=messaging.AndroidNotification(color="red"))),
        messaging.Message(topic="news", webpush=messaging.WebpushConfig(fcm_options=messaging.WebpushFCMOptions(link="http://x.com"))),
        messaging.Message(topic="news", token=TOKEN),
    ]
    for message in refused_by_the_sdk:
        with pytest.raises(ValueError):
            messaging.send(message, dry_run=True, app=app)
    assert sends(emulator) == {"400": len(reach_the_server)}


def test_both_spellings_and_proto3_leniency_pass(emulator, raw_sends):
    body = {"validateOnly": True, "message": {
        "topic": "news", "fcmOptions": {"analyticsLabel": "a"}, "fcm_options": {"analytics_label": "b"},
        "android": {"priority": "high", "ttl": "3.5s", "directBootOk": "true", "notification": {
            "notificationCount": "7", "notification_priority": "priority_max", "visibility": 2, "color": "#A0b1C2",
            "eventTime": "2026-01-15T01:30:15.010Z", "vibrate_timings": ["0.5s", "1s"], "sticky": None}},
        "apns": {"headers": {"apns-priority": "5"}, "payload": {"aps": {"content-available": 1}}},
        "webpush": {"fcmOptions": {"link": "https://example.com"}, "notification": {"actions": [{"action": "a"}]}},
        "data": {"k": "v"}}}
    assert post(emulator, body) == (200, {"name": f"projects/{PROJECT}/messages/fake_message_id"})
    assert messaging.send(Raw(body), app=emulator.app()) == f"projects/{PROJECT}/messages/fake_message_id"
