"""The language switch in headless Chromium: a curator picks 中文, then
Русский, in the header and Core memory and Ask follow, at 420 px too."""

from __future__ import annotations

import pytest

from tests.ui.shots import shot as _shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_curator_switches_the_language_in_the_header(browser, live_server, curator, memory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.expected_conditions import text_to_be_present_in_element
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(f"{live_server.url}/core/")
    browser.find_element(By.NAME, "username").send_keys("curator")
    browser.find_element(By.NAME, "password").send_keys("a-long-test-password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Core memory"

    # The select submits itself (dashboard.js); the page comes back in Chinese.
    Select(browser.find_element(By.ID, "language-switch")).select_by_value("zh-hans")
    WebDriverWait(browser, 10).until(text_to_be_present_in_element((By.TAG_NAME, "h1"), "核心记忆"))
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-hans"
    _shot(browser, "i18n-core-zh")

    # It is remembered: Ask is Chinese too; then switch to Russian there.
    browser.find_element(By.LINK_TEXT, "提问").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "向记忆提问"
    Select(browser.find_element(By.ID, "language-switch")).select_by_value("ru")
    WebDriverWait(browser, 10).until(
        text_to_be_present_in_element((By.TAG_NAME, "h1"), "Спросить память")
    )
    box = browser.find_element(By.NAME, "q")
    box.send_keys("Anna lives")
    browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
    WebDriverWait(browser, 10).until(
        text_to_be_present_in_element((By.ID, "recall-results"), "известно с")
    )
    assert "Anna lives in Lisbon." in browser.find_element(By.ID, "recall-results").text

    _shot(browser, "i18n-ask-ru")
    # Narrow: the recall results (this view's own content) stay inside the
    # window. The header and menu are base.html's; their wrapping is not here.
    browser.set_window_size(420, 900)
    results = browser.find_element(By.ID, "recall-results")
    assert results.size["width"] <= browser.execute_script("return window.innerWidth")
    _shot(browser, "i18n-ask-ru-420")


# Every view of the panel, by the word its menu tab shows.
VIEWS = [
    ("/", "Today"),
    ("/library/", "Library"),
    ("/graph/", "Graph"),
    ("/episodes/", "Episodes"),
    ("/entities/", "Entities"),
    ("/beliefs/", "Beliefs"),
    ("/review/", "Review"),
    ("/skills/", "Skills"),
    ("/core/", "Core memory"),
    ("/ask/?q=Anna", "Ask"),
    ("/log/", "Log"),
    ("/ops/", "Ops"),
]


def test_every_view_in_every_language_fits_a_phone(browser, live_server, curator, memory):  # type: ignore[no-untyped-def]
    from django.conf import settings
    from django.utils import translation
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("curator")
    browser.find_element(By.NAME, "password").send_keys("a-long-test-password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    browser.set_window_size(420, 900)
    for code, _name in settings.LANGUAGES:
        browser.add_cookie({"name": settings.LANGUAGE_COOKIE_NAME, "value": code})
        for url, tab in VIEWS:
            browser.get(f"{live_server.url}{url}")
            with translation.override(code):
                expected = translation.gettext(tab)
            if code != "en":
                assert expected != tab, f"{tab!r} has no {code} translation"
            assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == code
            shown = browser.find_element(By.CSS_SELECTOR, "nav.tabs a.on").text
            assert shown == expected, (code, url, shown)
            wide, window = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]"
            )
            assert wide <= window, (code, url, wide, window)
            _shot(browser, f"view-{code}-{url.strip('/').split('?')[0] or 'today'}-420")
