"""Write mirroring (after commit, through the Celery task on its own queue)
and isolation between spaces: a provider answers only the spaces it
allows, and a fact mirrored from one space never comes back in another."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engram_site.celery import PROVIDERS_QUEUE, app
from memory.services.providers import client
from memory.services.spaces import create_api_key
from tests.providers.conftest import stdio_entry, warm

FACT = "The harbour master of Portree is called Eilidh"


@pytest.fixture
def spaces(db, client_for):  # type: ignore[no-untyped-def]
    return {
        name: client_for(create_api_key(space_name=name)[1]) for name in ("alpha", "beta", "gamma")
    }


def _recall(api, query: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return api.post("/api/v1/recall", {"query": query}, content_type="application/json").json()


def _provider_ids(body: dict) -> list[str]:  # type: ignore[type-arg]
    return [r["source"]["provider_id"] for r in body["results"] if r["type"] == "provider"]


def test_mirror_task_runs_on_its_own_queue() -> None:
    assert app.conf.task_routes["memory.mirror_to_providers"] == {"queue": PROVIDERS_QUEUE}
    assert PROVIDERS_QUEUE in {q.name for q in app.conf.task_queues}


def test_saved_facts_are_mirrored_and_stay_in_their_space(
    spaces, providers, django_capture_on_commit_callbacks, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    calls = tmp_path / "calls"
    (notes,) = providers(
        stdio_entry(
            mode="hybrid",
            mirror_writes=True,
            spaces=["alpha", "beta"],
            env={"MEMSERVER_CALLS": str(calls)},
        )
    )
    warm(notes)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        saved = spaces["alpha"].post(
            "/api/v1/memory/facts", {"text": FACT}, content_type="application/json"
        )
    assert saved.status_code == 200, saved.content
    assert callbacks, "the mirror is scheduled after commit"
    item_id = saved.json()["id"]
    key = f"engram/alpha/{item_id}"
    # At the provider, under the space's name.
    found = client.call_tool(notes, "search", {"query": "harbour master Portree"})
    assert key in [r["id"] for r in found.structured_content["results"]]  # type: ignore[index]

    # alpha gets it back from the provider; beta asks the same provider and
    # does not; gamma may not use the provider at all (no call made).
    assert key in _provider_ids(_recall(spaces["alpha"], "harbour master of Portree"))
    beta = _recall(spaces["beta"], "harbour master of Portree")
    assert key not in _provider_ids(beta)
    assert beta["degraded"] == []
    before = calls.read_text().count("\n")
    gamma = _recall(spaces["gamma"], "harbour master of Portree lighthouse keeper")
    assert _provider_ids(gamma) == []
    assert gamma["degraded"] == []
    assert calls.read_text().count("\n") == before
    # beta still sees the provider's own notes: it is allowed, only alpha's
    # mirrored fact is kept from it.
    assert "n1" in _provider_ids(_recall(spaces["beta"], "the lighthouse keeper on Skye"))


def test_a_dead_mirror_never_fails_the_write(
    spaces, providers, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    providers(
        {
            "name": "gone",
            "command": [sys.executable, "-c", "raise SystemExit(1)"],
            "mode": "prefetch",
            "mirror_writes": True,
            "timeout": 0.5,
        }
    )
    with django_capture_on_commit_callbacks(execute=True):
        saved = spaces["alpha"].post(
            "/api/v1/memory/facts", {"text": FACT}, content_type="application/json"
        )
        turn = spaces["alpha"].post(
            "/api/v1/turns",
            {"session_id": "s1", "role": "user", "text": "I moved to Inverness last spring."},
            content_type="application/json",
        )
    assert saved.status_code == 200
    assert turn.status_code in (200, 201, 202), turn.content


def test_results_are_fetched_per_request_never_cached(spaces, providers, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    calls = tmp_path / "calls"
    (notes,) = providers(stdio_entry(mode="prefetch", env={"MEMSERVER_CALLS": str(calls)}))
    warm(notes)
    for name in ("alpha", "beta", "alpha"):
        assert "n1" in _provider_ids(_recall(spaces[name], "the lighthouse keeper on Skye"))
    assert calls.read_text().count("\n") == 3
