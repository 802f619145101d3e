"""The dashboard in headless Chromium against a live server: log in, see the
facts, forget one, edit the core block and see the new version."""

from __future__ import annotations

import pytest
from django.conf import settings

from tests.ui.shots import shot as _shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_curator_forgets_a_fact_and_edits_core_memory(browser, live_server, curator, memory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.expected_conditions import text_to_be_present_in_element
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{live_server.url}/")
    browser.find_element(By.NAME, "username").send_keys("curator")
    browser.find_element(By.NAME, "password").send_keys("a-long-test-password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    assert "Memory active" in browser.find_element(By.ID, "status-ribbon").text

    # The Library: all three are listed; open the history of the superseded one.
    browser.find_element(By.LINK_TEXT, "Library").click()
    rows = browser.find_element(By.ID, "library-rows").text
    assert "Anna lives in Lisbon." in rows and "The user prefers green tea." in rows
    old = memory["old"].pk
    browser.find_element(By.CSS_SELECTOR, f"#mem-{old} summary").click()
    browser.find_element(By.CSS_SELECTOR, f"#mem-{old} button[hx-get]").click()
    history = browser.find_element(By.CSS_SELECTOR, f"#history-{old} .chain")
    assert "Anna lives in Lisbon." in history.text
    _shot(browser, "facts")

    # Forget the tea preference.
    tea = memory["tea"]
    browser.find_element(By.CSS_SELECTOR, f"#mem-{tea.pk} summary").click()
    browser.find_element(By.CSS_SELECTOR, f"#mem-{tea.pk} button[name=forget]").click()
    browser.switch_to.alert.accept()
    assert "Forgot 1 fact" in browser.find_element(By.CLASS_NAME, "messages").text
    tea.refresh_from_db()
    assert tea.status == "forgotten"
    browser.find_element(By.CSS_SELECTOR, f"#mem-{tea.pk} summary").click()
    assert "Restore" in browser.find_element(By.ID, f"mem-{tea.pk}").text

    # Core memory: edit the user block and see version 1 in its history.
    browser.find_element(By.LINK_TEXT, "Core memory").click()
    box = browser.find_element(By.CSS_SELECTOR, "#core-user textarea")
    box.clear()
    box.send_keys("Name: Sam\nLives in Lisbon")
    browser.find_element(By.CSS_SELECTOR, "#core-user button").click()
    assert "version 1" in browser.find_element(By.CLASS_NAME, "messages").text
    card = browser.find_element(By.ID, "core-user")
    assert "v1" in card.find_element(By.TAG_NAME, "h2").text
    assert "Name: Sam" in card.find_element(By.TAG_NAME, "textarea").get_attribute("value")
    _shot(browser, "core")

    for tab, name in [
        ("Ask", "ask"),
        ("Graph", "graph"),
        ("Log", "log"),
        ("Ops", "ops"),
    ]:
        browser.find_element(By.LINK_TEXT, tab).click()
        assert "Memory active" in browser.find_element(By.ID, "status-ribbon").text
        if name == "ask":
            browser.find_element(By.NAME, "q").send_keys("Where does Anna live\n")
            WebDriverWait(browser, 10).until(
                text_to_be_present_in_element((By.ID, "recall-results"), "Anna lives in Lisbon.")
            )
        if name == "graph":
            browser.find_element(By.CSS_SELECTOR, "#graph .node")
        _shot(browser, name)
    assert settings.DEBUG is False
