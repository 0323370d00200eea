"""The inspector's actions in a real browser, by clicking: headless Chromium against a running fcm-emulator (as
strict as FCM: it knows only registered devices). A device registered from the page, subscribed to a topic and
sent an image notification shows it in its inbox with the image loaded; unsubscribing works from the Actions
tab and the device's page; a device group is created, grown and shrunk, and a message to it reaches its members;
refusals show the API's own error text. Every FCM call appears in the request log. Screenshots go to
INSPECTOR_SCREENSHOTS (default .build/test-output/inspector)."""
import json
import re

import pytest
from selenium.webdriver.common.by import By

from fcmharness import Emulator
from inspectorbrowser import browser, ImageServer, choose, click, open_view, png, shot, table_rows, type_into, wait  # noqa: F401 (browser is a fixture)

PROJECT, SENDER = "acme", "4242"
PHONE = "actions-phone:APA91b" + "p" * 24
TABLET = "actions-tablet:APA91b" + "t" * 24
WATCH = "actions-watch:APA91b" + "w" * 24
UNKNOWN = "never-registered:APA91b" + "n" * 24


@pytest.fixture
def emulator():
    running = Emulator("--strict-registrations")
    yield running
    running.stop()


def seed(emulator, *tokens):
    emulator.request("POST", "/emulator/v1/registrations",
                     {"project": PROJECT, "sender_id": SENDER, "registrations": [{"token": t} for t in tokens]})


def act_as(driver, emulator, project=PROJECT, sender=SENDER):
    open_view(driver, emulator, "actions", "#register-button")
    type_into(driver, "act-project", project)
    type_into(driver, "act-sender", sender)


def logged(emulator):
    """(method, endpoint, status) of every request the emulator logged: FCM calls, not the admin API."""
    return [(r["method"], r["endpoint"], r["status"]) for r in emulator.request("GET", "/emulator/v1/requests")["requests"]]


def test_a_device_registered_subscribed_and_sent_an_image_by_clicking_shows_it_in_its_inbox(browser, emulator, tmp_path):
    (tmp_path / "pizza.png").write_bytes(png(320, 160))
    images = ImageServer(tmp_path)
    try:
        act_as(browser, emulator)
        type_into(browser, "register-id", PHONE)
        choose(browser, "register-platform", "IOS")
        type_into(browser, "register-app", "com.acme.news")
        state, text = click(browser, "register-button", "register-result")
        assert state == "ok" and f"registered {PHONE} (IOS, com.acme.news) in project acme, sender 4242" in text, text
        assert "POST /emulator/v1/registrations → 200" in text, text
        record = emulator.request("GET", "/emulator/v1/registrations/" + PHONE)
        assert (record["kind"], record["project"], record["platform"], record["app"]) == ("token", PROJECT, "IOS", "com.acme.news")

        # The device just registered is the one the other panels act on.
        assert browser.find_element(By.ID, "topic-registration").get_attribute("value") == PHONE
        type_into(browser, "topic-name", "news")
        state, text = click(browser, "subscribe-button", "topic-result")
        assert state == "ok" and "subscribed to news since" in text, text
        assert f"POST /v1/projects/acme/registrations/{PHONE.replace(':', '%3A')}/topicSubscriptions?topicName=news → 200" in text, text
        assert [t["name"] for t in emulator.request("GET", "/emulator/v1/registrations/" + PHONE)["topics"]] == ["news"]

        url = images.base + "/pizza.png"
        choose(browser, "send-target", "topic")
        type_into(browser, "send-to", "news")
        type_into(browser, "send-title", "Pizza is here")
        type_into(browser, "send-body", "Hot and fresh")
        type_into(browser, "send-image", url)
        state, text = click(browser, "send-button", "send-result")
        assert state == "ok" and re.search(r"sent projects/acme/messages/\S+", text), text
        preview = json.loads(browser.find_element(By.ID, "send-preview").text)
        assert preview["message"]["apns"] == {"payload": {"aps": {"mutable-content": 1}}, "fcm_options": {"image": url}}, preview
        # The whole view, with each outcome: what docs/images/inspector-actions.png shows.
        size = browser.get_window_size()
        browser.set_window_size(1400, 1300)
        browser.execute_script("window.scrollTo(0, 0)")
        shot(browser, "actions.png")
        browser.set_window_size(size["width"], size["height"])

        # The register outcome's link opens the device; the notification is there, its image loaded on all three.
        browser.find_element(By.ID, "register-open").click()
        message = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "#inbox article.message"))
        assert "Pizza is here" in message.text and "Hot and fresh" in message.text
        shown = message.find_elements(By.CSS_SELECTOR, "img.notification-image")
        assert sorted(i.get_attribute("data-platform") for i in shown) == ["android", "ios", "web"], "mutable-content lets iOS show it"
        wait(browser).until(lambda d: all(d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i) for i in shown))
        assert [browser.execute_script("return arguments[0].naturalWidth", i) for i in shown] == [320, 320, 320]
        assert "this device" in browser.find_element(By.CSS_SELECTOR, "figure.device.ios").text
        browser.execute_script("arguments[0].scrollIntoView()", message)
        shot(browser, "actions-inbox.png")
    finally:
        images.stop()

    # Both FCM calls are in the request log, and the page's Requests view lists them.
    assert logged(emulator) == [("POST", "topics.create", 200), ("POST", "messages.send", 200)]
    browser.find_element(By.CSS_SELECTOR, "#tabs a[data-view=requests]").click()
    wait(browser).until(lambda d: len(table_rows(d, "requests-table")) == 2)
    assert [(row[2], row[4], row[6]) for row in table_rows(browser, "requests-table")] == [
        ("POST", "messages.send", "200"), ("POST", "topics.create", "200")]


def test_unsubscribing_and_the_apis_refusals(browser, emulator):
    seed(emulator, PHONE)
    for topic in ["news", "weather"]:
        emulator.subscribe(PROJECT, PHONE, topic)
    act_as(browser, emulator)
    type_into(browser, "topic-registration", PHONE)
    type_into(browser, "topic-name", "news")
    state, text = click(browser, "unsubscribe-button", "topic-result")
    assert state == "ok" and "unsubscribed from news." in text, text
    assert [t["name"] for t in emulator.request("GET", "/emulator/v1/registrations/" + PHONE)["topics"]] == ["weather"]

    # Again: the device has no such subscription, and the API says so.
    state, text = click(browser, "unsubscribe-button", "topic-result")
    assert state == "error" and "Refused: 404 NOT_FOUND: Requested entity was not found." in text, text
    assert browser.find_element(By.ID, "topic-result").get_attribute("role") == "alert"

    # A registration FCM never heard of.
    type_into(browser, "topic-registration", UNKNOWN)
    state, text = click(browser, "subscribe-button", "topic-result")
    assert state == "error" and "Refused: 404 NOT_FOUND / UNREGISTERED: Requested entity was not found." in text, text
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", browser.find_element(By.ID, "topic-result"))
    shot(browser, "actions-refused.png")

    # A message the API refuses, with its reason.
    choose(browser, "send-target", "condition")
    type_into(browser, "send-to", "'a' in topics &&")
    type_into(browser, "send-title", "x")
    state, text = click(browser, "send-button", "send-result")
    assert state == "error" and text.startswith("Refused: 400 INVALID_ARGUMENT: Invalid condition: expected 'topic' in topics at position 17\n"), text

    assert logged(emulator)[2:] == [  # after the two subscriptions made to start with
        ("DELETE", "topics.delete", 200), ("DELETE", "topics.delete", 404), ("POST", "topics.create", 404), ("POST", "messages.send", 400)]

    # On the device's own page: subscribe with its box, unsubscribe with a row's button; the table follows.
    open_view(browser, emulator, "registration/" + PHONE, "#device-subscribe")
    type_into(browser, "device-topic", "sports")
    state, text = click(browser, "device-subscribe", "device-result")
    assert state == "ok", text
    wait(browser).until(lambda d: [r[0] for r in table_rows(d, "registration-topics")] == ["sports", "weather"])
    browser.find_element(By.CSS_SELECTOR, ".device-unsubscribe[data-topic=weather]").click()
    wait(browser).until(lambda d: [r[0] for r in table_rows(d, "registration-topics")] == ["sports"])
    assert browser.find_element(By.CSS_SELECTOR, "#device-topics h2").text == "Topics (1)"
    assert [t["name"] for t in emulator.request("GET", "/emulator/v1/registrations/" + PHONE)["topics"]] == ["sports"]


def group_members(emulator, name):
    groups = [g for g in emulator.request("GET", "/emulator/v1/groups")["groups"] if g["name"] == name]
    return groups[0]["members"] if groups else None


def test_a_device_group_created_and_edited_from_the_page_gets_a_message(browser, emulator):
    seed(emulator, PHONE, TABLET, WATCH)
    act_as(browser, emulator)
    type_into(browser, "group-name", "family")
    type_into(browser, "group-members", PHONE + "\n" + TABLET)
    state, text = click(browser, "group-create", "group-result")
    assert state == "ok" and "created family; notification key APA91b" in text and "family now has 2 members" in text, text
    assert group_members(emulator, "family") == [PHONE, TABLET]

    type_into(browser, "group-members", WATCH)
    state, text = click(browser, "group-add", "group-result")
    assert state == "ok" and "added 1 to family" in text and "family now has 3 members" in text, text
    type_into(browser, "group-members", TABLET)
    state, text = click(browser, "group-remove", "group-result")
    assert state == "ok" and "removed 1 from family" in text, text
    assert group_members(emulator, "family") == [PHONE, WATCH]

    # Creating it again: FCM's words.
    state, text = click(browser, "group-create", "group-result")
    assert state == "error" and "Refused: 400: notification_key already exists" in text, text
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", browser.find_element(By.ID, "group-result"))
    shot(browser, "actions-group.png")

    choose(browser, "send-target", "group")
    type_into(browser, "send-to", "family")
    type_into(browser, "send-title", "Dinner at 7")
    state, text = click(browser, "send-button", "send-result")
    assert state == "ok" and "sent projects/acme/messages/" in text, text
    inboxes = {t: len(emulator.request("GET", f"/emulator/v1/registrations/{t}/inbox")["messages"]) for t in (PHONE, TABLET, WATCH)}
    assert inboxes == {PHONE: 1, TABLET: 0, WATCH: 1}, inboxes

    # Each change is the device-group API's (adding and removing read the key first), then the send.
    assert logged(emulator) == [
        ("POST", "groups.mutate", 200), ("GET", "groups.get", 200), ("POST", "groups.mutate", 200), ("GET", "groups.get", 200),
        ("POST", "groups.mutate", 200), ("POST", "groups.mutate", 400), ("GET", "groups.get", 200), ("POST", "messages.send", 200)]
    browser.find_element(By.ID, "send-open").click()
    wait(browser).until(lambda d: len(table_rows(d, "groups-table")) == 1)
    assert table_rows(browser, "groups-table")[0][:2] == ["family", SENDER]


def test_a_token_other_than_owner_acts_under_iam(browser):
    """The access token field: a token given with --accept-token speaks for a viewer, who may not subscribe."""
    emulator = Emulator("--strict-registrations", "--accept-token", "viewer-token=planner@ci.iam.gserviceaccount.com",
                        "--iam", "planner@ci.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@acme")
    try:
        seed(emulator, PHONE)
        act_as(browser, emulator)
        type_into(browser, "act-token", "viewer-token")
        type_into(browser, "topic-registration", PHONE)
        type_into(browser, "topic-name", "news")
        state, text = click(browser, "subscribe-button", "topic-result")
        assert state == "error" and "403 PERMISSION_DENIED / IAM_PERMISSION_DENIED" in text, text
        assert "cloudmessaging.topicSubscriptions.create" in text, text
        type_into(browser, "act-token", "owner")
        state, text = click(browser, "subscribe-button", "topic-result")
        assert state == "ok", text
        principals = [r["principal"] if "principal" in r else None for r in emulator.request("GET", "/emulator/v1/requests")["requests"]]
        assert principals == ["serviceAccount:planner@ci.iam.gserviceaccount.com", None], "the request log names who acted"
    finally:
        emulator.stop()


def test_a_made_up_installation_id_registers_as_an_fid(browser, emulator):
    act_as(browser, emulator, project="", sender="")
    choose(browser, "register-kind", "fid")
    browser.find_element(By.ID, "register-make-up").click()
    fid = browser.find_element(By.ID, "register-id").get_attribute("value")
    assert re.fullmatch(r"[cdef][A-Za-z0-9_-]{21}", fid), fid
    state, text = click(browser, "register-button", "register-result")
    assert state == "ok" and f"registered {fid} (ANDROID, com.example.app) in no project (any)." in text, text
    record = emulator.request("GET", "/emulator/v1/registrations/" + fid)
    assert (record["kind"], record["project"]) == ("fid", ""), record
    # Without a project the v1 APIs have no path: the page says so and sends nothing.
    state, text = click(browser, "subscribe-button", "topic-result")
    assert state == "error" and text == "Not sent: give the project id: the v1 API names it in the path.", text
    assert logged(emulator) == []
