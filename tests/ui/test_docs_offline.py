"""/api/v1/docs works with no internet: Swagger UI comes from Engram's own
static files, and the page lists the API's operations in a browser that can
reach nothing but this machine."""

from __future__ import annotations

import pytest

from tests.ui.conftest import external_requests

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_render_with_the_network_cut_off(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{live_server.url}/api/v1/docs")
    WebDriverWait(browser, 20).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, ".opblock-summary-path"))
    )
    paths = {
        element.text.replace("\u200b", "")
        for element in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")
    }
    for path in ("/api/v1/turns/batch", "/api/v1/recall", "/api/v1/context", "/api/v1/status"):
        assert path in paths, sorted(paths)
    assert browser.find_element(By.CSS_SELECTOR, ".info .title").text.startswith("Engram")
    assert external_requests(browser) == []
