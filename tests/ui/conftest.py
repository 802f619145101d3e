"""A curator and a space with some memory in it, made through the services,
and headless Chromium with the internet cut off."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model

from memory.models import MemoryItem, Space
from memory.services.facts import save_fact


@pytest.fixture
def curator(db):  # type: ignore[no-untyped-def]
    return get_user_model().objects.create_user(
        "curator", password="a-long-test-password", is_staff=True
    )


@pytest.fixture
def staff_client(client, curator):  # type: ignore[no-untyped-def]
    client.force_login(curator)
    return client


@pytest.fixture
def memory(space: Space) -> dict[str, MemoryItem]:
    old = save_fact(
        space=space,
        text="Anna lives in Porto.",
        subject="Anna",
        predicate="lives_in",
        object="Porto",
    ).item
    new = save_fact(
        space=space,
        text="Anna lives in Lisbon.",
        subject="Anna",
        predicate="lives_in",
        object="Lisbon",
    ).item
    tea = save_fact(
        space=space,
        text="The user prefers green tea.",
        subject="user",
        predicate="prefers",
        object="green tea",
        kind="preference",
    ).item
    assert old and new and tea
    return {"old": old, "new": new, "tea": tea}


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    """Headless Chromium that can reach this machine only: every other host
    fails to resolve, so a page that needs the internet visibly breaks. Its
    network log is kept for `external_requests`."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("Chromium and chromedriver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="engram-chromium-")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1360,900",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def external_requests(driver) -> list[str]:  # type: ignore[no-untyped-def]
    """URLs the page asked for that are not on this machine (data: and
    blob: URLs are made in the page itself)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        url = message["params"]["request"]["url"]
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about", "chrome") or parts.hostname in LOCAL_HOSTS:
            continue
        urls.append(url)
    return urls
