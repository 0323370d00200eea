"""Everything the inspector shows from data stays text. Registrations, apps, projects, sender ids, group names,
message fields and the APIs' error texts (which echo what was sent) are entered through the page's own actions
with HTML in them (`<img onerror>`, `<script>`, `<b>`), then every view is opened in headless Chromium. Nothing
runs, no element is made from the data, and the text shows as typed.

The page's Content-Security-Policy would stop an inline script or handler even if one were made, so the test
does not rely on `window.pwned` alone: it also looks for elements made from the data and for CSP violation
reports, either of which appears as soon as any of it is put on the page as HTML."""
import json

from selenium.webdriver.common.by import By

from fcmharness import Emulator
from inspectorbrowser import browser, choose, click, open_view, shot, table_rows, type_into, wait  # noqa: F401 (browser is a fixture)

IMG = '<img src=x onerror="window.pwned=1">'
SCRIPT = "<script>window.pwned=2</script>"
TOKEN = "x<img/src=x/onerror=window.pwned=3>:APA91b"  # no whitespace: a well-formed registration
PROJECT = "<b>acme</b>"
SENDER = "<i>42</i>"
APP = IMG + SCRIPT

WATCH = """
window.pwned = undefined;
window.violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.violations.push(e.violatedDirective + " " + e.sample));
"""

# Elements only HTML made from the data could create: the page itself makes no script, b, i or img elements
# in its views (but the notification images it makes on purpose), and sets no inline handler.
MADE = """
return [...document.querySelectorAll("#view script, #view b, #view i, #view img:not(.notification-image), [onerror], [onload]")]
  .map((e) => e.outerHTML.slice(0, 80));
"""


def assert_inert(driver, where):
    assert driver.execute_script("return window.pwned") is None, where
    assert driver.execute_script("return window.violations") == [], where
    assert driver.execute_script(MADE) == [], where


def view_text(driver):
    return driver.execute_script("return document.getElementById('view').textContent")


def test_html_in_every_field_stays_text(browser):
    emulator = Emulator("--strict-registrations")
    try:
        open_view(browser, emulator, "actions", "#register-button")
        browser.execute_script(WATCH)
        type_into(browser, "act-project", PROJECT)
        type_into(browser, "act-sender", SENDER)

        type_into(browser, "register-id", TOKEN)
        choose(browser, "register-platform", "WEB")
        type_into(browser, "register-app", APP)
        state, text = click(browser, "register-button", "register-result")
        assert state == "ok" and f"registered {TOKEN} (WEB, {APP}) in project {PROJECT}, sender {SENDER}" in text, text

        type_into(browser, "topic-name", "news")
        state, text = click(browser, "subscribe-button", "topic-result")
        assert state == "ok", text

        type_into(browser, "group-name", IMG)
        type_into(browser, "group-members", TOKEN)
        state, text = click(browser, "group-create", "group-result")
        assert state == "ok" and f"created {IMG}" in text and f"{IMG} now has 1 member" in text, text

        choose(browser, "send-target", "token")
        type_into(browser, "send-to", TOKEN)
        type_into(browser, "send-title", IMG)
        type_into(browser, "send-body", SCRIPT)
        type_into(browser, "send-data", "<b>k</b>=" + APP)
        state, text = click(browser, "send-button", "send-result")
        assert state == "ok" and f"sent projects/{PROJECT}/messages/" in text, text
        assert json.loads(browser.find_element(By.ID, "send-preview").text)["message"]["notification"] == {"title": IMG, "body": SCRIPT}

        # The APIs' refusals echo what was sent: shown as text too.
        type_into(browser, "send-image", 'javascript:"><img src=x onerror=window.pwned=5>')
        state, text = click(browser, "send-button", "send-result")
        assert state == "error" and "Invalid image URL" in text and '"><img src=x onerror=window.pwned=5>' in text, text
        type_into(browser, "send-image", "")
        choose(browser, "send-target", "topic")
        type_into(browser, "send-to", "<img/src=x/onerror=window.pwned=6>")
        state, text = click(browser, "send-button", "send-result")
        assert state == "error" and "Invalid topic name '<img/src=x/onerror=window.pwned=6>'" in text, text
        # An HTML error page, as a proxy would answer: its source, as text.
        emulator.request("PUT", "/emulator/v1/faults", {"html_errors": True, "error_rates": [{"endpoint": "topics.create", "status": 503, "rate": 1}]})
        type_into(browser, "topic-name", "sports")
        state, text = click(browser, "subscribe-button", "topic-result")
        assert state == "error" and text.startswith("Refused: 503: <"), text
        emulator.request("PUT", "/emulator/v1/faults", {})
        assert_inert(browser, "actions")
        shot(browser, "escaped-actions.png")

        # Every view that shows these, reached without reloading (the listener and window.pwned stay).
        def show(fragment, ready):
            browser.execute_script("location.hash = arguments[0]", fragment)
            wait(browser).until(lambda d: d.execute_script("return !!document.querySelector(arguments[0])", ready))

        show("#registrations", "#registrations-table[data-ready=true]")
        rows = table_rows(browser, "registrations-table")
        assert [(row[1], row[3]) for row in rows] == [(PROJECT, APP)], rows
        assert_inert(browser, "registrations")

        browser.find_element(By.CSS_SELECTOR, "#registrations-table tbody tr").click()
        wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#inbox article.message"))
        shown = view_text(browser)
        for value in [TOKEN, APP, PROJECT, f"{IMG} ({SENDER})", IMG, SCRIPT, "<b>k</b>"]:
            assert value in shown, value
        assert_inert(browser, "device")
        shot(browser, "escaped-device.png")

        show("#topics", "#topics-table[data-ready=true]")
        assert table_rows(browser, "topics-table") == [["news", PROJECT, "1"]]
        browser.find_element(By.LINK_TEXT, "news").click()
        wait(browser).until(lambda d: len(table_rows(d, "subscribers-table")) == 1)
        assert PROJECT in view_text(browser)
        assert_inert(browser, "topic")

        show("#groups", "#groups-table[data-ready=true]")
        assert [row[:3] for row in table_rows(browser, "groups-table")] == [[IMG, SENDER, PROJECT]]
        assert_inert(browser, "groups")

        show("#requests", "#requests-table[data-ready=true]")
        wait(browser).until(lambda d: len(table_rows(d, "requests-table")) >= 4)
        assert "/v1/projects/<b>acme</b>/" in view_text(browser) or "/v1/projects/%3Cb%3Eacme%3C%2Fb%3E/" in view_text(browser)
        assert_inert(browser, "requests")
    finally:
        emulator.stop()
