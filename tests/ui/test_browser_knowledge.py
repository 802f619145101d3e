"""The knowledge views in headless Chromium: each opens wide and at 420 px
without horizontal scroll; the graph's slider travels back in time and the
node set changes; clicking a node roams from it and shows its edge labels."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import Belief, Session, Turn
from memory.services.facts import save_fact
from tests.ui.shots import shot as _shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def history(space):  # type: ignore[no-untyped-def]
    def on(text: str) -> datetime:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)

    porto = save_fact(
        space=space,
        text="Anna lives in Porto.",
        subject="Anna",
        predicate="lives_in",
        object="Porto",
        valid_from=on("2020-01-01"),
    ).item
    save_fact(
        space=space,
        text="Anna lives in Lisbon.",
        subject="Anna",
        predicate="lives_in",
        object="Lisbon",
        valid_from=on("2023-01-01"),
    )
    save_fact(
        space=space,
        text="Anna works at Initech.",
        subject="Anna",
        predicate="works_at",
        object="Initech",
        valid_from=on("2021-01-01"),
    )
    session = Session.objects.create(space=space, external_id="chat-1", title="Moving day")
    for i in range(6):
        Turn.objects.create(
            space=space, session=session, role="user", text=f"A long unbroken turn {'x' * 90} {i}"
        )
    belief = Belief.objects.create(space=space, text="Anna moves often.", proof_count=1)
    belief.evidence.set([porto])
    return session


def _nodes(driver) -> str:  # type: ignore[no-untyped-def]
    return driver.find_element("id", "graph").get_attribute("data-nodes") or ""


def test_the_knowledge_views_fit_and_the_graph_travels_in_time(
    browser, live_server, curator, history
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{live_server.url}/graph/")
    browser.find_element(By.NAME, "username").send_keys("curator")
    browser.find_element(By.NAME, "password").send_keys("a-long-test-password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    wait = WebDriverWait(browser, 10)
    wait.until(lambda d: "Lisbon" in _nodes(d))
    now = _nodes(browser)
    assert "Porto" in now and "Initech" in now
    _shot(browser, "knowledge-graph-now")

    # Slide back to 2020-06-01: Lisbon (2023) and Initech (2021) were not true yet.
    browser.execute_script(
        """const s = document.getElementById('graph-as-of');
        const first = Date.parse(s.dataset.first + 'T00:00:00Z');
        s.value = String(Math.round((Date.parse('2020-06-01T00:00:00Z') - first) / 86400000));
        s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change'));"""
    )
    wait.until(lambda d: _nodes(d) != now)
    past = _nodes(browser)
    assert "Porto" in past and "Lisbon" not in past and "Initech" not in past
    assert "as_of=2020-06-01" in browser.current_url
    _shot(browser, "knowledge-graph-2020")

    # Opening that URL again starts at the same instant.
    browser.get(browser.current_url)
    wait.until(lambda d: "Porto" in _nodes(d))
    assert "Lisbon" not in _nodes(browser)

    # Now: labels are hidden until a node is picked; roaming 1 hop from Porto
    # keeps Porto and Anna, not Initech (two hops away).
    browser.get(f"{live_server.url}/graph/")
    wait.until(lambda d: "Initech" in _nodes(d))
    assert not browser.find_elements(By.CSS_SELECTOR, "#graph .edge-label.shown")
    browser.execute_script(
        "document.getElementById('graph-hops').value = '1';"
        "document.getElementById('graph-hops').dispatchEvent(new Event('change'));"
    )
    browser.find_element(By.CSS_SELECTOR, "#graph .node[aria-label=Porto]").click()
    wait.until(lambda d: "Initech" not in _nodes(d))
    assert _nodes(browser) == "Anna|Porto"
    assert browser.find_elements(By.CSS_SELECTOR, "#graph .edge-label.shown")
    assert "Porto" in browser.find_element(By.ID, "graph-details").text
    _shot(browser, "knowledge-graph-roam")

    views = [
        ("/graph/", "graph"),
        ("/episodes/", "episodes"),
        (f"/episodes/{history.pk}/", "episode"),
        ("/entities/", "entities"),
        ("/beliefs/", "beliefs"),
    ]
    for width in (1360, 420):
        browser.set_window_size(width, 900)
        for url, name in views:
            browser.get(f"{live_server.url}{url}")
            assert "Memory active" in browser.find_element(By.ID, "status-ribbon").text
            if name == "beliefs":
                browser.find_element(By.CSS_SELECTOR, ".evidence summary").click()
                assert "Anna lives in Porto." in browser.find_element(By.ID, "belief-list").text
            if name == "entities":
                browser.find_element(By.LINK_TEXT, "Anna").click()
                assert "Anna lives in Porto." in browser.find_element(By.ID, "entity-facts").text
            if width == 420:
                fits = browser.execute_script(
                    "return document.documentElement.scrollWidth <= window.innerWidth"
                )
                assert fits, f"{name} scrolls sideways at 420 px"
            _shot(browser, f"knowledge-{name}-{width}")
