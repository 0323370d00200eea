"""Cross-site requests from a real browser: headless Chromium opens pages served from another loopback origin (a
small http.server on another port) that try what a hostile page would, an auto-submitting `text/plain` form that
resets the emulator, another that imports a state dated 2030 with device groups off, `fetch()` in `no-cors` mode,
and a JSON `fetch()` that needs a preflight; and a page reached under a name re-pointed at 127.0.0.1 (DNS
rebinding). Each request reaches the emulator (its refusal counts say so) and changes nothing: the export is the
same bytes before and after. The emulator's own page still changes it."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from fcmharness import Emulator, wait_until
from inspectorbrowser import start_browser

PHONE = "csrf-phone:APA91b" + "c" * 20
TABLET = "csrf-tablet:APA91b" + "t" * 20


class AttackerSite:
    """Serves PAGES ({path: html}) on 127.0.0.1, a free port: another origin than the emulator's."""

    def __init__(self, pages):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                page = pages.get(self.path.split("?")[0])
                body = (page or "not found").encode()
                self.send_response(200 if page else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def attribute(text):
    return text.replace("&", "&amp;").replace("'", "&#39;").replace('"', "&quot;").replace("<", "&lt;")


def text_plain_form(action, document):
    """A form that posts DOCUMENT as JSON in a text/plain body: the classic trick of a field name holding the
    JSON up to a `=` and its value the rest (`..."pad":"` `=` `"}`)."""
    text = json.dumps({**document, "pad": "="}, separators=(",", ":"))
    cut = text.index('"pad":"=') + len('"pad":"')
    name, value = text[:cut], text[cut + 1:]
    return (f"<form id=f method=POST enctype=text/plain action='{attribute(action)}'>"
            f"<input type=hidden name='{attribute(name)}' value='{attribute(value)}'></form>"
            "<script>document.getElementById('f').submit()</script>")


def hostile_export():
    """A state dated 2030 whose project may not create device groups, with a registration of the attacker's."""
    return {"format": "fcm-emulator-export", "version": 2, "clock": {"now": "2030-01-01T00:00:00Z", "new_project": True},
            "registrations": [{"id": "attacker:APA91b", "topics": {"x": "2030-01-01T00:00:00Z"}}]}


def fetch_page(emulator_base):
    calls = [
        ("reset no-cors", f"{emulator_base}/emulator/v1/reset", {"method": "POST", "mode": "no-cors", "body": "{}"}),
        ("import no-cors", f"{emulator_base}/emulator/v1/import", {"method": "POST", "mode": "no-cors", "body": json.dumps(hostile_export()),
                                                                    "headers": {"Content-Type": "text/plain"}}),
        ("expire tokens no-cors", f"{emulator_base}/emulator/v1/tokens:expire", {"method": "POST", "mode": "no-cors", "keepalive": True}),
        ("reset json cors", f"{emulator_base}/emulator/v1/reset", {"method": "POST", "body": "{}",
                                                                   "headers": {"Content-Type": "application/json"}}),
        ("read state", f"{emulator_base}/emulator/v1/state", {}),
    ]
    script = "const calls = " + json.dumps(calls) + """;
window.results = {};
Promise.all(calls.map(([name, url, options]) => fetch(url, options)
    .then((r) => r.text().then((t) => { results[name] = r.type + " " + r.status + " " + t.slice(0, 40); }))
    .catch((e) => { results[name] = "failed " + e.name; })))
  .then(() => { document.title = "done"; });"""
    return f"<title>running</title><script>{script}</script>"


@pytest.fixture(scope="module")
def browser():
    # attacker.example resolves to 127.0.0.1, as a rebinding name does once it is re-pointed.
    driver = start_browser(resolver_rules="MAP attacker.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
                           flags=["--disable-features=HttpsUpgrades"])
    yield driver
    driver.quit()


def seeded():
    emulator = Emulator("--strict-registrations")
    emulator.request("POST", "/emulator/v1/registrations",
                     {"project": "acme", "sender_id": "42", "registrations": [{"token": PHONE}, {"token": TABLET}]})
    emulator.subscribe("acme", PHONE, "news")
    emulator.request("POST", "/fcm/notification", {"operation": "create", "notification_key_name": "family", "registration_ids": [PHONE, TABLET]},
                     headers={"project_id": "42"})
    return emulator


def export(emulator):
    import urllib.request

    with urllib.request.urlopen(emulator.base + "/emulator/v1/export") as response:
        return response.read()


def test_pages_on_another_origin_change_nothing(browser):
    emulator = seeded()
    base = emulator.base
    site = AttackerSite({
        "/reset.html": text_plain_form(f"{base}/emulator/v1/reset", {}),
        "/import.html": text_plain_form(f"{base}/emulator/v1/import", hostile_export()),
        "/fetch.html": fetch_page(base),
    })
    try:
        before = export(emulator)
        counts = emulator.stats()
        assert (counts["registrations"], counts["subscriptions"], counts["groups"]) == (2, 1, 1)

        # The forms submit themselves: the browser lands on the emulator's answer, a refusal naming the Origin.
        for page in ["/reset.html", "/import.html"]:
            browser.get(site.base + page)
            WebDriverWait(browser, 20).until(lambda d: d.current_url.startswith(base))
            answer = json.loads(browser.find_element("tag name", "body").text)
            assert answer["error"]["code"] == 403, answer
            assert answer["error"]["message"].startswith(f'Origin "{site.base}" is not this fcm-emulator\'s own'), answer

        browser.get(site.base + "/fetch.html")
        WebDriverWait(browser, 20).until(lambda d: d.title == "done")
        results = browser.execute_script("return window.results")
        # no-cors answers are opaque to the page; the JSON request died at its preflight; the read is not allowed.
        assert results["reset no-cors"].startswith("opaque 0"), results
        assert results["import no-cors"].startswith("opaque 0"), results
        assert results["expire tokens no-cors"].startswith("opaque 0"), results
        assert results["reset json cors"] == "failed TypeError", results
        assert results["read state"] == "failed TypeError", results

        stats = emulator.stats()
        # Every attempt arrived and was refused: 2 forms + 3 no-cors posts by Origin, the JSON one at its preflight.
        assert (stats["refused_origin"], stats["refused_preflight"]) == (5, 1), stats
        assert (stats["registrations"], stats["subscriptions"], stats["groups"]) == (2, 1, 1), stats
        assert export(emulator) == before
        clock = emulator.request("GET", "/emulator/v1/clock")
        assert clock["fixed"] is False and clock["new_project"] is False, clock
    finally:
        site.stop()
        emulator.stop()


def test_a_rebound_name_gets_no_page_and_no_answer(browser):
    emulator = seeded()
    port = emulator.base.rsplit(":", 1)[1]
    try:
        before = export(emulator)
        for path in ["/", "/emulator/v1/state", "/emulator/ui/inspector.js"]:
            browser.get(f"http://attacker.example:{port}{path}")
            answer = json.loads(browser.find_element("tag name", "body").text)
            assert answer["error"]["code"] == 403 and "DNS rebinding" in answer["error"]["message"], answer
        assert emulator.stats()["refused_host"] >= 3  # and the favicon each page asks for
        assert export(emulator) == before
    finally:
        emulator.stop()


def test_the_emulators_own_page_still_changes_it(browser):
    emulator = seeded()
    try:
        browser.get(emulator.base + "/#controls")
        # The page's own calls: the same reset the hostile pages tried, from the emulator's origin.
        browser.execute_script("""
            window.done = false;
            fetch('/emulator/v1/reset', {method: 'POST', headers: {'Content-Type': 'application/json'}})
              .then((r) => { window.answered = r.status; window.done = true; });""")
        WebDriverWait(browser, 20).until(lambda d: d.execute_script("return window.done"))
        assert browser.execute_script("return window.answered") == 200
        assert wait_until(lambda: emulator.stats()["registrations"] == 0)
    finally:
        emulator.stop()
