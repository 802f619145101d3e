"""LLM steps go through the shared providers and hourly budget, and fall back
to their deterministic path when the budget is spent or the answer is junk."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from consolidation import services
from memory.models import SessionSummary
from tests.consolidation.messy import post_sessions
from tests.fakes.llm_server import FakeLLM, Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(settings):  # type: ignore[no-untyped-def]
    with FakeLLM() as server:
        settings.ENGRAM = {
            **settings.ENGRAM,
            "LLM_PROVIDERS": [server.provider()],
            "LLM_TIMEOUT_SECONDS": 2.0,
        }
        yield server


def summary(text: str) -> Reply:
    return Reply(content=json.dumps({"summary": text}))


def test_it_summarizes_with_the_llm_and_counts_the_calls(space, api, fake):  # type: ignore[no-untyped-def]
    post_sessions(api, timezone.now())
    fake.push(*(summary(f"Dana talked about pottery and deploying, part {i}.") for i in range(3)))
    run = services.run_now(space=space, only=["summarize"])
    assert run is not None and run.status == "done"
    assert run.steps["summarize"]["counts"] == {"summarized": 3, "llm": 3, "extractive": 0}
    assert run.llm_calls == 3 == len(fake.requests)
    methods = set(SessionSummary.objects.filter(space=space).values_list("method", flat=True))
    assert methods == {"llm"}
    # the stored conversation reaches the model framed as data
    assert "<data>" in fake.requests[0]["messages"][-1]["content"]


def test_a_spent_budget_falls_back_to_extractive(space, api, fake, settings):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "LLM_BUDGET_PER_HOUR": 1}
    post_sessions(api, timezone.now())
    fake.push(*(summary("An LLM summary.") for _ in range(3)))
    run = services.run_now(space=space, only=["summarize"])
    assert run is not None and run.status == "done" and run.errors == []
    assert run.steps["summarize"]["counts"] == {"summarized": 3, "llm": 1, "extractive": 2}
    assert len(fake.requests) == 1
    extractive = SessionSummary.objects.filter(space=space, method="extractive")
    assert extractive.count() == 2 and all("pottery class" in s.text for s in extractive)


def test_junk_answers_fall_back_and_the_run_finishes(space, api, fake):  # type: ignore[no-untyped-def]
    post_sessions(api, timezone.now())
    fake.push(*(Reply(content="not json at all") for _ in range(6)))  # answer + repair, x3
    run = services.run_now(space=space, only=["summarize"])
    assert run is not None and run.status == "done"
    assert run.steps["summarize"]["counts"]["extractive"] == 3
    assert run.llm_calls == 6
