"""Today, Library and Log in headless Chromium at desktop and phone widths:
no sideways page scroll, edit-as-supersede and batch forget / restore."""

from __future__ import annotations

import pytest

from memory.models import MemoryItem
from tests.ui.shots import shot as _shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _fits(driver) -> bool:  # type: ignore[no-untyped-def]
    return bool(
        driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    )


def test_today_library_and_log_at_two_widths(browser, live_server, curator, memory, space):
    from selenium.webdriver.common.by import By

    from memory.services.facts import save_fact

    save_fact(space=space, text="A very long token " + "x" * 160 + " to wrap.")
    browser.get(f"{live_server.url}/")
    browser.find_element(By.NAME, "username").send_keys("curator")
    browser.find_element(By.NAME, "password").send_keys("a-long-test-password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    for width, tag in ((1360, "wide"), (420, "narrow")):
        browser.set_window_size(width, 900)
        for path, name, marker in (
            ("/", "today", ".kpis"),
            ("/library/", "library", "#library-rows"),
            ("/log/", "log", "#log-rows"),
        ):
            browser.get(f"{live_server.url}{path}")
            browser.find_element(By.CSS_SELECTOR, marker)
            if name == "library":
                for summary in browser.find_elements(By.CSS_SELECTOR, "#library-rows summary"):
                    summary.click()
            assert _fits(browser), f"{path} scrolls sideways at {width}px"
            _shot(browser, f"h16a-{name}-{tag}")

    # Edit as supersede.
    browser.set_window_size(1360, 900)
    browser.get(f"{live_server.url}/library/?q=tea")
    tea = memory["tea"]
    browser.find_element(By.CSS_SELECTOR, f"#mem-{tea.pk} summary").click()
    box = browser.find_element(By.ID, f"edit-{tea.pk}")
    box.clear()
    box.send_keys("The user prefers jasmine tea.")
    browser.find_element(By.CSS_SELECTOR, f"#mem-{tea.pk} button[name=save]").click()
    assert "Saved as a new version" in browser.find_element(By.CLASS_NAME, "messages").text
    tea.refresh_from_db()
    assert tea.superseded_by is not None
    assert tea.superseded_by.text == "The user prefers jasmine tea."
    _shot(browser, "h16a-library-edited")

    # Batch forget, then restore, the two Anna facts' live one and the new tea.
    browser.get(f"{live_server.url}/library/?status=active")
    ids = [memory["new"].pk, tea.superseded_by.pk]
    for pk in ids:
        browser.find_element(By.CSS_SELECTOR, f"#mem-{pk} input[name=item]").click()
    browser.find_element(By.CSS_SELECTOR, "#batch-form button[value=forget]").click()
    assert "Forgot 2 memories." in browser.find_element(By.CLASS_NAME, "messages").text
    assert set(MemoryItem.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
        "forgotten"
    }
    browser.get(f"{live_server.url}/library/?status=forgotten")
    for pk in ids:
        browser.find_element(By.CSS_SELECTOR, f"#mem-{pk} input[name=item]").click()
    browser.find_element(By.CSS_SELECTOR, "#batch-form button[value=restore]").click()
    assert "Restored 2 memories." in browser.find_element(By.CLASS_NAME, "messages").text
    assert set(MemoryItem.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"active"}
    browser.find_element(By.LINK_TEXT, "Log").click()
    assert "Restored memory" in browser.find_element(By.ID, "log-rows").text
    _shot(browser, "h16a-log-after")
