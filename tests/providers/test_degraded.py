"""A late or dead provider: recall and /context answer without it, name it
in `degraded`, and /context stays within its 2 s budget; the circuit
breaker then stops calling it until its cool-down is over."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from memory.services.providers import breaker
from tests.providers.conftest import free_port, stdio_entry, warm

QUERY = "who is the lighthouse keeper on Skye"

# /context recalls on a helper thread, which sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def local_fact(api):  # type: ignore[no-untyped-def]
    saved = api.post(
        "/api/v1/memory/facts",
        {"text": "The lighthouse on Skye was painted white in 2020"},
        content_type="application/json",
    )
    assert saved.status_code == 200


def _context(api):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    response = api.get("/api/v1/context", {"query": QUERY})
    return response, time.monotonic() - started


def test_a_late_provider_is_degraded_and_context_keeps_its_budget(
    api, providers, local_fact, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    calls = tmp_path / "calls"
    (slow,) = providers(
        stdio_entry(
            "slow", timeout=0.5, env={"MEMSERVER_DELAY": "5", "MEMSERVER_CALLS": str(calls)}
        )
    )
    warm(slow)
    response, took = _context(api)
    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] == ["provider:slow"]
    assert took < 2.0, took
    # Engram's own memory is still there.
    assert "painted white" in body["blocks"]["recalled"]
    assert calls.read_text().count("\n") == 1  # the call did go out

    started = time.monotonic()
    recalled = api.post("/api/v1/recall", {"query": QUERY}, content_type="application/json")
    assert time.monotonic() - started < 2.0
    assert recalled.json()["degraded"] == ["provider:slow"]
    assert [r for r in recalled.json()["results"] if r["type"] == "fact"]


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "down", "command": [sys.executable, "-c", "raise SystemExit(3)"]},
        {"name": "down", "command": ["/nonexistent/engram-provider"]},
        {"name": "down", "url": "http://127.0.0.1:{port}/mcp"},
    ],
    ids=["exits", "missing", "refused"],
)
def test_a_dead_provider_is_degraded_and_never_fails_the_request(
    api, providers, local_fact, entry
) -> None:  # type: ignore[no-untyped-def]
    if "url" in entry:
        entry = {**entry, "url": entry["url"].format(port=free_port())}
    providers({**entry, "timeout": 1.5})
    for _ in range(2):
        response, took = _context(api)
        assert response.status_code == 200
        assert response.json()["degraded"] == ["provider:down"]
        assert "painted white" in response.json()["blocks"]["recalled"]
        assert took < 2.0, took
    assert breaker.status("down").last_error


def test_the_breaker_stops_calls_while_open_then_probes(
    api, providers, local_fact, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    calls = tmp_path / "calls"
    (slow,) = providers(
        stdio_entry(
            "slow", timeout=0.3, env={"MEMSERVER_DELAY": "5", "MEMSERVER_CALLS": str(calls)}
        ),
        PROVIDER_BREAKER_FAILURES=2,
        PROVIDER_BREAKER_SECONDS=1.5,
    )
    warm(slow)

    def recall() -> tuple[dict, float]:  # type: ignore[type-arg]
        started = time.monotonic()
        body = api.post("/api/v1/recall", {"query": QUERY}, content_type="application/json").json()
        return body, time.monotonic() - started

    for _ in range(2):
        body, _took = recall()
        assert body["degraded"] == ["provider:slow"]
    assert breaker.status("slow").state == breaker.OPEN
    assert calls.read_text().count("\n") == 2
    # Open: no call reaches the server, and recall does not wait for it.
    for _ in range(3):
        body, took = recall()
        assert body["degraded"] == ["provider:slow"]
        assert took < 0.25, took
    time.sleep(0.2)
    assert calls.read_text().count("\n") == 2
    # After the cool-down one probe goes out; it fails, so the circuit opens again.
    time.sleep(1.5)
    body, _took = recall()
    assert body["degraded"] == ["provider:slow"]
    time.sleep(0.2)
    assert calls.read_text().count("\n") == 3
    assert breaker.status("slow").state == breaker.OPEN
    recall()
    time.sleep(0.2)
    assert calls.read_text().count("\n") == 3


def test_a_probe_that_answers_closes_the_circuit(api, providers, local_fact) -> None:  # type: ignore[no-untyped-def]
    (notes,) = providers(
        stdio_entry(mode="prefetch"), PROVIDER_BREAKER_FAILURES=1, PROVIDER_BREAKER_SECONDS=0.3
    )
    warm(notes)
    breaker.failure("notes", "simulated outage")
    assert breaker.status("notes").state == breaker.OPEN
    body = api.post("/api/v1/recall", {"query": QUERY}, content_type="application/json").json()
    assert body["degraded"] == ["provider:notes"]
    time.sleep(0.4)
    body = api.post("/api/v1/recall", {"query": QUERY}, content_type="application/json").json()
    assert body["degraded"] == []
    assert breaker.status("notes").state == breaker.CLOSED
    assert any(r["type"] == "provider" for r in body["results"])
