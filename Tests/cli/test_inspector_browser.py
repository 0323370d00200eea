"""The inspector in a real browser: headless Chromium against a running fcm-emulator, as a person would use
it. After `fcmctl apply` of examples/quickstart the page lists the subscriptions; after `fcmctl send --image`
the device's inbox shows the notification with its image loaded; the principals page shows who holds which
role where; a 503 fault turned on from the page makes the next apply retry; an export imported into a new emulator shows the same page, and `fcmctl plan` there
has nothing to do. Screenshots go to INSPECTOR_SCREENSHOTS (default .build/test-output/inspector)."""
import json
import os
import re
import subprocess
import urllib.request

import pytest
from selenium.webdriver.common.by import By

from fcmharness import FCMCTL, ROOT, Emulator, run
from inspectorbrowser import browser, ImageServer, open_view, png, shot, table_rows, wait  # noqa: F401 (browser is a fixture)

QUICKSTART = os.path.join(ROOT, "examples", "quickstart")
PHONE = "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
KIOSK = "kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug"


def seeded_emulator():
    """The emulator's default mode, as strict as FCM, seeded with the quickstart's registrations by the script
    the docs tell people to use."""
    emulator = Emulator("--strict-registrations")
    seeded = subprocess.run(
        ["bash", os.path.join(ROOT, "scripts", "emulator-seed.sh"), QUICKSTART], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "FCM_EMULATOR_HOST": emulator.host, "FCMCTL": FCMCTL})
    assert seeded.returncode == 0, seeded.stderr
    return emulator


@pytest.fixture
def applied(tmp_path):
    emulator = seeded_emulator()
    state = str(tmp_path / "state.json")
    result = run(["apply", "--auto-approve", "-f", QUICKSTART, "--state", state], emulator)
    assert result.returncode == 0, result.stdout + result.stderr
    yield emulator, state
    emulator.stop()


def test_the_page_lists_what_apply_subscribed(browser, applied):
    emulator, _ = applied
    open_view(browser, emulator, "registrations", "#registrations-table[data-ready=true]")
    rows = table_rows(browser, "registrations-table")
    assert len(rows) == 3, rows
    assert any("weather-nyc" in row[4] and "industry-tech" in row[4] for row in rows), rows
    assert browser.find_element(By.ID, "stat-subscriptions").text == "3"
    shot(browser, "registrations.png")

    # Search by topic narrows the list to the subscribers.
    search = browser.find_element(By.ID, "registration-search")
    search.send_keys("topic:industry-tech\n")
    wait(browser).until(lambda d: len(table_rows(d, "registrations-table")) == 1)
    # Words that must all match: the space goes to the emulator as %20 (a "+" would stay a plus there).
    open_view(browser, emulator, "registrations", "#registrations-table[data-ready=true]")
    browser.find_element(By.ID, "registration-search").send_keys("topic:weather-nyc project:quickstart-demo\n")
    wait(browser).until(lambda d: len(table_rows(d, "registrations-table")) == 2)

    open_view(browser, emulator, "topics", "#topics-table[data-ready=true]")
    topics = {row[0]: row for row in table_rows(browser, "topics-table")}
    assert topics["weather-nyc"][1:] == ["quickstart-demo", "2"], topics
    assert topics["industry-tech"][1:] == ["quickstart-demo", "1"], topics
    browser.find_element(By.LINK_TEXT, "weather-nyc").click()
    wait(browser).until(lambda d: len(table_rows(d, "subscribers-table")) == 2)
    shot(browser, "topic-subscribers.png")

    open_view(browser, emulator, "groups", "#groups-table[data-ready=true]")
    groups = table_rows(browser, "groups-table")
    assert len(groups) == 1 and groups[0][0] == "appUser-Chris" and groups[0][1] == "123456789012", groups
    assert groups[0][4].startswith("APA91b"), "the group's notification key is shown"


def test_the_principals_page_shows_who_holds_which_role_where(browser, tmp_path):
    """A service account signs in with its key and plans; a viewer is granted with --iam: the page lists both,
    with their projects, roles and where each role comes from, and the permission each endpoint needs."""
    key = tmp_path / "sa.json"
    emulator = Emulator("--strict-registrations", "--project-id", "quickstart-demo", "--service-account-out", str(key),
                        "--iam", "planner@ci.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@quickstart-demo")
    try:
        seeded = subprocess.run(
            ["bash", os.path.join(ROOT, "scripts", "emulator-seed.sh"), QUICKSTART], capture_output=True, text=True, cwd=ROOT,
            env={**os.environ, "FCM_EMULATOR_HOST": emulator.host, "FCMCTL": FCMCTL})
        assert seeded.returncode == 0, seeded.stderr
        planned = run(["plan", "-f", QUICKSTART, "--state", str(tmp_path / "state.json")],
                      env={"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(key), "HOME": str(tmp_path),
                           "CLOUDSDK_CONFIG": str(tmp_path / "no-gcloud")})
        assert planned.returncode == 0, planned.stderr

        open_view(browser, emulator, "principals", "#principals-table[data-ready=true]")
        rows = {row[0]: row for row in table_rows(browser, "principals-table")}
        account = rows["serviceAccount:fcmctl-test@quickstart-demo.iam.gserviceaccount.com"]
        assert account[1] == "quickstart-demo" and account[4] == "1", account
        assert "roles/firebasecloudmessaging.admin on quickstart-demo (default)" in account[2], account
        planner = rows["serviceAccount:planner@ci.iam.gserviceaccount.com"]
        assert "roles/firebasecloudmessaging.viewer on quickstart-demo (--iam)" in planner[2], planner
        assert "own-project" in browser.find_element(By.ID, "iam-default").text
        permissions = table_rows(browser, "permissions-table")
        assert ["messages.send", "cloudmessaging.messages.create", "Google's"] in permissions, permissions
        assert ["groups.mutate (remove)", "cloudmessaging.topicSubscriptions.delete", "a guess"] in permissions, permissions
        shot(browser, "principals.png")
    finally:
        emulator.stop()


def test_the_inbox_shows_the_notification_with_its_image(browser, applied, tmp_path):
    emulator, _ = applied
    (tmp_path / "pizza.png").write_bytes(png(320, 160))
    images = ImageServer(tmp_path)
    try:
        url = images.base + "/pizza.png"
        sent = run(["send", "-f", QUICKSTART, "--token", PHONE, "--title", "Pizza is here", "--body", "Hot and fresh", "--image", url], emulator)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        open_view(browser, emulator, "registration/" + PHONE, "#inbox article.message")
        message = browser.find_element(By.CSS_SELECTOR, "#inbox article.message")
        assert "Pizza is here" in message.text and "Hot and fresh" in message.text
        images_shown = message.find_elements(By.CSS_SELECTOR, "img.notification-image")
        assert sorted(i.get_attribute("data-platform") for i in images_shown) == ["android", "ios", "web"]
        wait(browser).until(lambda d: all(d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i) for i in images_shown))
        widths = [browser.execute_script("return arguments[0].naturalWidth", i) for i in images_shown]
        assert widths == [320, 320, 320], widths
        raw = message.find_element(By.CSS_SELECTOR, "pre.raw").get_attribute("textContent")
        assert json.loads(raw)["apns"]["payload"]["aps"]["mutable-content"] == 1, "the raw message is the message as sent"
        browser.execute_script("arguments[0].scrollIntoView()", message)
        shot(browser, "inbox.png")
    finally:
        images.stop()

    # Uninstalling from the page: FCM forgets the subscriptions.
    browser.execute_script("window.confirm = () => true")
    browser.find_element(By.ID, "uninstall").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "uninstall").text == "Uninstalled")
    assert emulator.request("GET", "/emulator/v1/registrations/" + PHONE)["topic_count"] == 0


def test_a_fault_turned_on_in_the_page_makes_apply_retry(browser, applied):
    emulator, state = applied
    # Drift for the apply to repair: an apply with nothing to do reports no request counts.
    emulator.unsubscribe("quickstart-demo", KIOSK, "industry-tech")
    open_view(browser, emulator, "controls", "#faults")
    browser.find_element(By.ID, "add-503").click()
    browser.find_element(By.ID, "apply-faults").click()
    wait(browser).until(lambda d: emulator.request("GET", "/emulator/v1/faults")["error_rates"])
    assert emulator.request("GET", "/emulator/v1/faults")["error_rates"] == [{"rate": 0.5, "status": 503}]
    shot(browser, "controls.png")

    # One request at a time, so the emulator's seeded fault decisions are the same on every run.
    again = run(["apply", "--auto-approve", "--verbose", "--parallelism", "1", "-f", QUICKSTART, "--state", state], emulator)
    assert again.returncode == 0, again.stdout + again.stderr
    retries = re.search(r"^Requests: .*\bretries=(\d+)", again.stderr, re.MULTILINE)
    assert retries and int(retries.group(1)) > 0, again.stderr
    assert "industry-tech" in emulator.request("GET", "/emulator/v1/registrations/" + KIOSK)["topics"][0]["name"]

    browser.find_element(By.ID, "clear-faults").click()
    wait(browser).until(lambda d: not emulator.request("GET", "/emulator/v1/faults")["error_rates"])


def page_text(driver, emulator):
    """What the registration, topic and group views show, without the notification keys (a new one on every read)."""
    seen = {}
    for view, table in [("registrations", "registrations-table"), ("topics", "topics-table"), ("groups", "groups-table")]:
        open_view(driver, emulator, view, f"#{table}[data-ready=true]")
        seen[view] = [row[:4] for row in table_rows(driver, table)]
    open_view(driver, emulator, "registration/" + KIOSK, "#inbox")
    seen["device"] = driver.find_element(By.ID, "view").text
    return seen


def test_an_export_imported_into_a_new_emulator_shows_the_same_page(browser, applied, tmp_path):
    emulator, state = applied
    sent = run(["send", "-f", QUICKSTART, "--topic", "weather-nyc", "--title", "Rain at 5"], emulator)
    assert sent.returncode == 0, sent.stderr
    before = page_text(browser, emulator)

    open_view(browser, emulator, "controls", "#state")
    export_url = browser.find_element(By.ID, "export-link").get_attribute("href")
    with urllib.request.urlopen(export_url) as response:
        exported = response.read()
    assert json.loads(exported)["version"] == 2
    (tmp_path / "export.json").write_bytes(exported)

    # A new emulator, the export loaded through the page's Import.
    fresh = Emulator("--strict-registrations")
    try:
        open_view(browser, fresh, "controls", "#state")
        browser.find_element(By.ID, "import-file").send_keys(str(tmp_path / "export.json"))
        browser.find_element(By.ID, "import-button").click()
        wait(browser).until(lambda d: fresh.request("GET", "/emulator/v1/stats")["registrations"] == 3)
        assert page_text(browser, fresh) == before
        shot(browser, "imported.png")
        plan = run(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", state], fresh)
        assert plan.returncode == 0, plan.stdout + plan.stderr
    finally:
        fresh.stop()

    # And one started with --import DIR.
    directory = tmp_path / "saved"
    directory.mkdir()
    (directory / "fcm-emulator-export.json").write_bytes(exported)
    started = Emulator("--strict-registrations", "--import", str(directory))
    try:
        assert page_text(browser, started) == before
        plan = run(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", state], started)
        assert plan.returncode == 0, plan.stdout + plan.stderr
    finally:
        started.stop()
