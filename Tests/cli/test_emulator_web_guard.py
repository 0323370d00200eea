"""fcm-emulator closed to web pages, over raw HTTP (the browser's side is test_emulator_csrf_browser.py): a request
addressed to a name that is not the emulator's (DNS rebinding) is refused whatever it asks, a change with a foreign
Origin or, on the admin API, without `Content-Type: application/json` is refused, no CORS preflight is allowed, and
none of them changes anything; the emulator's own spellings (localhost, 127.0.0.1, [::1], same port), names given
with --allowed-host and, bound to 0.0.0.0, any IP address are answered."""
import http.client
import json
import subprocess

from fcmharness import EMULATOR, Emulator

PHONE = "guard-phone:APA91b" + "g" * 20


def send(port, method, path, headers, body=None, address="127.0.0.1"):
    connection = http.client.HTTPConnection(address, port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def port_of(emulator):
    return int(emulator.base.rsplit(":", 1)[1])


def export(emulator):
    status, _, body = send(port_of(emulator), "GET", "/emulator/v1/export", {})
    assert status == 200
    return body


def seeded(*flags):
    emulator = Emulator("--strict-registrations", *flags)
    emulator.request("POST", "/emulator/v1/registrations", {"project": "acme", "sender_id": "42", "registrations": [{"token": PHONE}]})
    emulator.subscribe("acme", PHONE, "news")
    return emulator


JSON = {"Content-Type": "application/json"}
# What a page could make a browser send: every kind of request the emulator answers, reads and changes.
REQUESTS = [
    ("GET", "/", {}, None),
    ("GET", "/emulator/ui/inspector.js", {}, None),
    ("GET", "/emulator/v1/state", {}, None),
    ("GET", "/emulator/v1/export", {}, None),
    ("POST", "/emulator/v1/reset", JSON, b"{}"),
    ("POST", "/emulator/v1/import", JSON, json.dumps({"format": "fcm-emulator-export", "version": 2}).encode()),
    ("PUT", "/emulator/v1/clock", JSON, b'{"now": "2030-01-01"}'),
    ("DELETE", f"/emulator/v1/registrations/{PHONE}", JSON, None),
    ("DELETE", f"/v1/projects/acme/registrations/{PHONE}/topicSubscriptions/news", {"Authorization": "Bearer owner"}, None),
    ("GET", "/computeMetadata/v1/instance/service-accounts/default/token", {"Metadata-Flavor": "Google"}, None),
]


def test_a_request_addressed_to_another_name_is_refused_whatever_it_asks_and_changes_nothing():
    emulator = seeded()
    try:
        port = port_of(emulator)
        before = export(emulator)
        for host in ["attacker.example", f"attacker.example:{port}", "localhost.attacker.example", "127.0.0.1.nip.io", "fcm-emulator"]:
            for method, path, headers, body in REQUESTS:
                status, answer_headers, text = send(port, method, path, {**headers, "Host": host}, body)
                assert status == 403, (host, method, path, status, text[:200])
                message = json.loads(text)["error"]["message"]
                assert message.startswith(f'Host "{host}" is not an address of this fcm-emulator'), message
                assert "DNS rebinding" in message and f'--allowed-host "{host.split(":")[0]}"' in message, message
                assert not any(name.lower().startswith("access-control-") for name in answer_headers), answer_headers
        assert export(emulator) == before
        stats = emulator.stats()
        assert stats["refused_host"] == 5 * len(REQUESTS) and stats["subscriptions"] == 1 and stats["registrations"] == 1, stats
        # The emulator's own names, with or without the port, in any case: answered.
        for host in [f"127.0.0.1:{port}", f"localhost:{port}", "LocalHost", f"[::1]:{port}", "127.0.0.1", "127.1.2.3"]:
            status, _, text = send(port, "GET", "/emulator/v1/health", {"Host": host})
            assert status == 200, (host, text)
    finally:
        emulator.stop()


def test_a_change_needs_json_and_the_emulators_own_origin_or_none():
    emulator = seeded()
    try:
        port = port_of(emulator)
        before = export(emulator)
        refused = []
        # What forms and no-cors fetches send: a form's three encodings, or no type at all.
        for kind in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]:
            for method, path in [("POST", "/emulator/v1/reset"), ("POST", "/emulator/v1/import"), ("POST", "/emulator/v1/tokens:expire"),
                                 ("PUT", "/emulator/v1/faults"), ("DELETE", f"/emulator/v1/registrations/{PHONE}"),
                                 ("POST", "//%65mulator/v1/reset")]:
                headers = {} if kind is None else {"Content-Type": kind}
                status, _, text = send(port, method, path, headers, b'{"latency_ms": 1}')
                message = json.loads(text)["error"]["message"]
                assert status == 403 and "needs 'Content-Type: application/json'" in message, (kind, method, path, text)
                refused.append("content_type")
        # A foreign page's Origin: another port of the same host, another loopback spelling of another port,
        # another site, a sandboxed frame or file (null). JSON or not, FCM endpoint or admin API.
        for origin in [f"http://127.0.0.1:{port + 1}", f"http://localhost:{port - 1}", "http://attacker.example", f"http://attacker.example:{port}",
                       "null", f"https://127.0.0.1:{port}/x", f"file://127.0.0.1:{port}"]:
            for method, path, headers in [("POST", "/emulator/v1/reset", JSON), ("PUT", "/emulator/v1/clock", JSON),
                                          ("DELETE", f"/v1/projects/acme/registrations/{PHONE}/topicSubscriptions/news",
                                           {"Authorization": "Bearer owner"}),
                                          ("POST", "/v1/projects/acme/messages:send", {"Authorization": "Bearer owner", **JSON})]:
                body = json.dumps({"now": "2030-01-01", "message": {"token": PHONE, "data": {"x": "y"}}}).encode()
                status, _, text = send(port, method, path, {**headers, "Origin": origin}, body)
                message = json.loads(text)["error"]["message"]
                assert status == 403 and message.startswith(f'Origin "{origin}" is not this fcm-emulator\'s own'), (origin, path, text)
                refused.append("origin")
        # The preflight a page's JSON request needs first: refused, and never with a CORS allowance.
        for origin in [f"http://127.0.0.1:{port + 1}", f"http://127.0.0.1:{port}"]:
            status, headers, text = send(port, "OPTIONS", "/emulator/v1/reset", {
                "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
            assert status == 403 and "answers no CORS preflight" in json.loads(text)["error"]["message"], text
            assert not any(name.lower().startswith("access-control-") for name in headers), headers
            refused.append("preflight")
        assert export(emulator) == before
        inbox = emulator.request("GET", f"/emulator/v1/registrations/{PHONE}/inbox")["messages"]
        assert inbox == [], "a refused send delivers nothing"
        stats = emulator.stats()
        for reason in ["content_type", "origin", "preflight"]:
            assert stats[f"refused_{reason}"] == refused.count(reason), (reason, stats)

        # The emulator's own page, under any loopback spelling of the same port (and curl, which sends no
        # Origin), may change it; a type with parameters is still JSON.
        for origin in [f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}", f"HTTP://LOCALHOST:{port}", None]:
            headers = {"Content-Type": "application/json; charset=utf-8", **({"Origin": origin} if origin else {})}
            status, _, text = send(port, "PUT", "/emulator/v1/clock", headers, b'{"now": "2027-01-02"}')
            assert status == 200 and json.loads(text)["now"].startswith("2027-01-02"), (origin, text)
        status, _, _ = send(port, "POST", "/emulator/v1/reset", {"Content-Type": "application/json", "Origin": f"http://localhost:{port}"})
        assert status == 200 and emulator.stats()["registrations"] == 0
    finally:
        emulator.stop()


def test_allowed_host_names_the_emulator_in_a_container():
    emulator = seeded("--allowed-host", "fcm-emulator", "--allowed-host", "Emu.Internal")
    try:
        port = port_of(emulator)
        for host in ["fcm-emulator", f"fcm-emulator:{port}", "FCM-EMULATOR:9595", "emu.internal"]:
            status, _, text = send(port, "GET", "/emulator/v1/stats", {"Host": host})
            assert status == 200 and json.loads(text)["registrations"] == 1, (host, text)
        # Its own page under that name may change it; another name still may not.
        status, _, _ = send(port, "PUT", "/emulator/v1/clock", {"Host": f"fcm-emulator:{port}", "Origin": f"http://fcm-emulator:{port}", **JSON},
                            b'{"now": null}')
        assert status == 200
        status, _, _ = send(port, "GET", "/emulator/v1/stats", {"Host": "attacker.example"})
        assert status == 403
    finally:
        emulator.stop()
    anything = Emulator("--allowed-host", "*")
    try:
        status, _, _ = send(port_of(anything), "GET", "/emulator/v1/health", {"Host": "whatever.example"})
        assert status == 200
    finally:
        anything.stop()
    for value in ["fcm-emulator:9595", "http://fcm-emulator", "a b", ""]:
        result = subprocess.run([EMULATOR, "--port", "0", "--allowed-host", value], capture_output=True, text=True, timeout=30)
        assert result.returncode != 0 and "--allowed-host takes a host name" in result.stderr, (value, result.stderr)


def test_bound_to_every_interface_any_ip_address_is_its_own_but_no_other_name():
    emulator = Emulator("--host", "0.0.0.0")
    try:
        assert emulator.base.startswith("http://0.0.0.0:"), emulator.base
        port = port_of(emulator)
        for host in ["10.1.2.3", f"192.168.0.7:{port}", "[fe80::1]", "[2001:db8::5]:8080", "localhost"]:
            status, _, text = send(port, "GET", "/emulator/v1/health", {"Host": host})
            assert status == 200, (host, text)
        for host in ["fcm-emulator", "10.1.2.3.attacker.example", "0x7f000001", "[fe80::1"]:
            status, _, text = send(port, "GET", "/emulator/v1/health", {"Host": host})
            assert status == 403 and b"or any IP address" in text, (host, text)
    finally:
        emulator.stop()
    loopback = Emulator()
    try:
        status, _, _ = send(port_of(loopback), "GET", "/emulator/v1/health", {"Host": "10.1.2.3"})
        assert status == 403, "bound to loopback, another address is not its own"
    finally:
        loopback.stop()
