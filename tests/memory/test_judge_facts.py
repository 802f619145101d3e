"""The write judge on the explicit write paths (POST /memory/facts, the
memory_save and remember_fact tools): the same judge the pipeline asks,
before the write transaction, falling back to the rules with the reason
recorded; and JUDGE_TIMEOUT_SECONDS an overall deadline, so a slow or
dribbling judge never holds a save past it (the fake OpenAI-format server)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from memory.models import Adjudication, MemoryItem
from tests.fakes.llm_server import FakeLLM, Reply

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]

# No structure the rule extractor reads (that would make them certain), and
# similarity 0.78: in the judge's band.
SUMMER = "The blue team ships the release build every Monday after standup."
WINTER = "The blue team ships the release build every Friday after standup."
TIMEOUT = 0.5
MARGIN = 0.6  # the rest of the save, on a shared 2-core machine


def verdict(**answer: Any) -> Reply:
    return Reply(content=json.dumps({"verdicts": [{"case": 0, **answer}]}))


@pytest.fixture
def server(settings):  # type: ignore[no-untyped-def]
    with FakeLLM() as fake:
        settings.ENGRAM = {
            **settings.ENGRAM,
            "LLM_PROVIDERS": [fake.provider(name="main")],
            "LLM_BUDGET_PER_HOUR": 100,
            "JUDGE": "main",
            "JUDGE_TIMEOUT_SECONDS": TIMEOUT,
        }
        yield fake


def post(api, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    response = api.post(path, json.dumps(body), content_type="application/json")
    took = time.monotonic() - started
    assert response.status_code == 200, response.content
    return response.json(), took


def fact(api, text: str) -> tuple[dict[str, Any], float]:  # type: ignore[no-untyped-def]
    return post(api, "/api/v1/memory/facts", {"text": text})


def judged(server: FakeLLM) -> list[dict[str, Any]]:
    return [r for r in server.requests if "You judge uncertain" in r["messages"][0]["content"]]


def test_post_facts_asks_the_judge_and_records_it(space, api, server):  # type: ignore[no-untyped-def]
    first, _ = fact(api, SUMMER)
    assert judged(server) == [] and not Adjudication.objects.exists()  # nothing uncertain
    server.push(verdict(verdict="merge"))
    out, _ = fact(api, WINTER)
    assert out["action"] == "NOOP" and out["id"] == first["id"]
    assert not MemoryItem.objects.filter(text=WINTER).exists()
    assert MemoryItem.objects.get(pk=int(first["id"])).frequency == 2
    record = Adjudication.objects.get()
    assert (record.kind, record.rules_action, record.verdict, record.action) == (
        "band",
        "ADD",
        "merge",
        "NOOP",
    )
    assert record.judge_used and record.judge == "main" and record.item_id == int(first["id"])
    listed = api.get("/api/v1/adjudications").json()["adjudications"]
    assert [a["id"] for a in listed] == [record.pk]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/tools/memory_save", {"block": "auto", "text": WINTER}),
        ("/api/v1/tools/remember_fact", {"text": WINTER}),
        ("/api/v1/memory/save", {"block": "auto", "text": WINTER}),
        ("/api/v1/memory/remember_fact", {"text": WINTER}),
    ],
)
def test_the_save_tools_ask_the_same_judge(space, api, server, path, body):  # type: ignore[no-untyped-def]
    fact(api, SUMMER)
    server.push(verdict(verdict="defer"))
    post(api, path, body)
    new = MemoryItem.objects.get(text=WINTER)
    assert new.status == MemoryItem.Status.PENDING_REVIEW
    record = Adjudication.objects.get()
    assert record.verdict == "defer" and record.action == "DEFER" and record.item_id == new.pk


def test_a_dry_run_records_nothing(space, api, server):  # type: ignore[no-untyped-def]
    fact(api, SUMMER)
    server.push(verdict(verdict="merge"))
    out, _ = post(api, "/api/v1/memory/facts", {"text": WINTER, "dry_run": True})
    assert out["action"] == "NOOP" and out["dry_run"] is True
    assert not Adjudication.objects.exists() and not MemoryItem.objects.filter(text=WINTER)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(content='{"verdicts": []}', delay=3.0), "timeout"),
        # A byte every 50 ms: no read ever times out, the whole takes ~10 s.
        (
            Reply(
                content=json.dumps({"verdicts": [{"case": 0, "verdict": "merge"}]}), trickle=0.05
            ),
            "timeout",
        ),
        (Reply(status=500), "unavailable: main: HTTP 500"),
        (Reply(content="Sure, merge them."), "invalid answer"),
    ],
    ids=["slow", "dribbling", "failing", "garbled"],
)
def test_a_slow_or_failing_judge_falls_back_within_the_deadline(space, api, server, reply, reason):  # type: ignore[no-untyped-def]
    fact(api, SUMMER)
    server.push(reply)
    out, took = fact(api, WINTER)
    assert took < TIMEOUT + MARGIN, took
    assert out["action"] == "ADD" and out["status"] == "active"  # the rules: new information
    record = Adjudication.objects.get()
    assert not record.judge_used and record.verdict == "" and record.action == "ADD"
    assert record.fallback_reason.startswith(reason), record.fallback_reason
    assert record.elapsed_ms < (TIMEOUT + MARGIN) * 1000


def test_judge_off_asks_nothing(space, api, server, settings):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE": ""}
    fact(api, SUMMER)
    out, _ = fact(api, WINTER)
    assert out["action"] == "ADD" and judged(server) == [] and not Adjudication.objects.exists()
