"""Headless Chromium (Debian's chromium and chromium-driver) under selenium, for the inspector's browser test
and benchmark. Nothing beyond loopback: Chromium resolves no host name and runs none of its background
services (updates, sync, safe browsing), so the only traffic is to the emulator and the test's image server."""
import os
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fcmharness import ROOT

CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", shutil.which("chromedriver") or "/usr/bin/chromedriver")
SCREENSHOTS = os.environ.get("INSPECTOR_SCREENSHOTS", os.path.join(ROOT, ".build", "test-output", "inspector"))


def start_browser(width=1400, height=1000, resolver_rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost", flags=()):
    """resolver_rules: Chromium's --host-resolver-rules; by default every host name but loopback fails to resolve."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # Selenium Manager would look for drivers online when it cannot find them; both paths are given.
    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [
        "--headless=new", "--no-sandbox",  # as root, Chromium's sandbox refuses to start
        "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
        "--disable-client-side-phishing-detection", "--metrics-recording-only", "--safebrowsing-disable-auto-update",
        f"--host-resolver-rules={resolver_rules}", *flags,
    ]:
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


def png(width, height):
    """A small gradient PNG, made here so the test needs no image from anywhere."""
    import struct
    import zlib

    rows = b"".join(b"\x00" + b"".join(bytes((x * 255 // width, y * 255 // height, 160)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class ImageServer:
    """Serves DIRECTORY on 127.0.0.1 (a free port) in a thread: where a notification's image comes from."""

    def __init__(self, directory):
        handler = lambda *args, **kwargs: SimpleHTTPRequestHandler(*args, directory=str(directory), **kwargs)  # noqa: E731
        SimpleHTTPRequestHandler.log_message = lambda *args: None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def shot(driver, name):
    os.makedirs(SCREENSHOTS, exist_ok=True)
    driver.save_screenshot(os.path.join(SCREENSHOTS, name))


def wait(driver, seconds=20):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds, ignored_exceptions=(StaleElementReferenceException,))


def open_view(driver, emulator, fragment, ready):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions

    driver.get(emulator.base + "/#" + fragment)
    return wait(driver).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ready)))


def table_rows(driver, table_id):
    """The cells' text, read in one script so a table the page replaces meanwhile cannot leave stale handles."""
    ready = "const t = document.getElementById(arguments[0]); return !!t && t.dataset.ready === 'true'"
    wait(driver).until(lambda d: d.execute_script(ready, table_id))
    return driver.execute_script(
        "return [...document.querySelectorAll('#' + arguments[0] + ' tbody tr')].map(r => [...r.cells].map(c => c.innerText.trim()))", table_id)


def type_into(driver, element_id, text):
    """Replaces a field's text as a person does (select all, type), so the page sees input events."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    element = driver.find_element(By.ID, element_id)
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(text if text else Keys.BACKSPACE)


def choose(driver, element_id, value):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, element_id)).select_by_value(value)


def click(driver, button_id, result_id):
    """Clicks an action's button and waits for its answer: the page disables the button while the action runs.
    Answers the outcome's state ("ok" or "error") and its text."""
    from selenium.webdriver.common.by import By

    button = driver.find_element(By.ID, button_id)
    button.click()
    wait(driver).until(lambda d: d.find_element(By.ID, button_id).is_enabled())
    result = driver.find_element(By.ID, result_id)
    assert result.is_displayed(), f"{button_id} showed no outcome"
    return result.get_attribute("data-state"), result.text


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module that asks for it (imported there by name)."""
    driver = start_browser()
    yield driver
    driver.quit()
