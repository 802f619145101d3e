"""The LLM boundary against a real local HTTP server in the OpenAI format."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from memory import llm
from memory.models import IngestJob, LlmUsage, MemoryItem, Turn
from memory.services.pipeline import run_job
from tests.fakes.llm_server import FakeLLM, Reply

pytestmark = pytest.mark.django_db


class Answer(BaseModel):
    city: str
    n: int


@pytest.fixture
def fake():  # type: ignore[no-untyped-def]
    with FakeLLM() as server:
        yield server


@pytest.fixture
def backup():  # type: ignore[no-untyped-def]
    with FakeLLM() as server:
        yield server


def configure(settings, *providers, budget=100, timeout=2.0):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {
        **settings.ENGRAM,
        "LLM_PROVIDERS": list(providers),
        "LLM_BUDGET_PER_HOUR": budget,
        "LLM_TIMEOUT_SECONDS": timeout,
    }


def ask(space):  # type: ignore[no-untyped-def]
    return llm.complete_json(space=space, purpose="test", system="sys", user="u", schema=Answer)


def test_it_parses_good_json(settings, space, fake):
    configure(settings, fake.provider())
    fake.push(Reply(content='{"city": "Lisbon", "n": 3}'))
    with llm.count_calls() as calls:
        assert ask(space) == Answer(city="Lisbon", n=3)
    assert calls.calls == 1
    sent = fake.requests[0]
    assert sent["model"] == "fake-model" and sent["response_format"] == {"type": "json_object"}
    assert "JSON schema" in sent["messages"][0]["content"]


def test_it_repairs_garbage_once(settings, space, fake):
    configure(settings, fake.provider())
    fake.push(
        Reply(content="Sure! here you go: city is Lisbon"),
        Reply(content='{"city": "Porto", "n": 1}'),
    )
    with llm.count_calls() as calls:
        assert ask(space).city == "Porto"
    assert calls.calls == 2
    assert "not valid" in fake.requests[1]["messages"][-1]["content"]


def test_it_falls_back_after_truncated_and_wrong_schema_answers(settings, space, fake, backup):
    configure(settings, fake.provider(name="first"), backup.provider(name="second"))
    fake.push(Reply(content='{"city": "Lis'), Reply(content='{"town": "Lisbon"}'))
    backup.push(Reply(content='```json\n{"city": "Faro", "n": 2}\n```'))
    assert ask(space).city == "Faro"
    assert len(fake.requests) == 2 and len(backup.requests) == 1


def test_it_reports_5xx_and_timeouts_as_transient(settings, space, fake, backup):
    configure(settings, fake.provider(), backup.provider(timeout=0.3))
    fake.push(Reply(status=500))
    backup.push(Reply(content='{"city": "x", "n": 1}', delay=1.0))
    with pytest.raises(llm.TransientError) as info:
        ask(space)
    assert isinstance(info.value, llm.LLMUnavailable)
    assert "HTTP 500" in str(info.value) and "timed out" in str(info.value)


def test_it_refuses_without_providers(settings, space):
    configure(settings)
    assert not llm.providers_configured()
    with pytest.raises(llm.LLMUnavailable):
        ask(space)


def test_it_stops_at_the_hourly_budget(settings, space, fake):
    configure(settings, fake.provider(), budget=2)
    fake.push(*[Reply(content='{"city": "a", "n": 1}')] * 3)
    ask(space)
    ask(space)
    with pytest.raises(llm.BudgetExceeded):
        ask(space)
    assert len(fake.requests) == 2
    assert LlmUsage.objects.get(space=space).calls == 2


# --- through the pipeline -----------------------------------------------------------------


def post(api, text, ref, role="user"):  # type: ignore[no-untyped-def]
    body = {"session_id": "s", "role": role, "text": text, "ref": ref}
    response = api.post("/api/v1/turns", body, content_type="application/json")
    assert response.status_code == 202
    return IngestJob.objects.get(turn_id=int(response.json()["id"]))


def test_the_pipeline_spends_at_most_two_calls_per_salient_turn(settings, space, api, fake):
    configure(settings, fake.provider())
    job = post(api, "I adopted a grey cat called Miso last spring.", "a")
    run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.result["extractor"] == "llm"
    assert job.result["llm_calls"] == 1  # nothing similar stored yet: no resolution call
    job = post(api, "I adopted a grey cat called Miso last spring, remember?", "b")
    run_job(job.pk)
    job.refresh_from_db()
    assert job.result["llm_calls"] == 2
    job = post(api, "thanks!", "c")
    run_job(job.pk)
    assert len(fake.requests) == 3  # the short turn cost nothing
    assert MemoryItem.objects.filter(space=space, disposition="ADD").count() == 2


def test_a_timeout_is_retried_then_succeeds(settings, space, api, fake):
    configure(settings, fake.provider(timeout=0.3))
    job = post(api, "My favourite band is Radiohead, always has been.", "t")
    fake.push(Reply(content="{}", delay=1.0))
    with pytest.raises(llm.TransientError):
        run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "pending" and "timed out" in job.last_error and job.attempts == 1
    run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.attempts == 2
    assert MemoryItem.objects.filter(space=space, text__icontains="Radiohead").count() == 1


def test_garbage_after_repair_is_retried_then_succeeds(settings, space, api, fake):
    configure(settings, fake.provider())
    fake.push(Reply(content="no json here"), Reply(content="still none"))
    job = post(api, "I have been learning Portuguese for two years now.", "g")
    with pytest.raises(llm.TransientError):
        run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "pending" and "invalid JSON after repair" in job.last_error
    run_job(job.pk)  # the model answers properly this time
    job.refresh_from_db()
    assert job.status == "done" and job.attempts == 2
    assert MemoryItem.objects.filter(space=space, text__icontains="Portuguese").count() == 1


def test_garbage_every_time_dead_letters_the_job(settings, space, api, fake):
    configure(settings, fake.provider())
    settings.ENGRAM = {**settings.ENGRAM, "JOB_MAX_ATTEMPTS": 2}
    fake.push(*[Reply(content="no json here")] * 4)
    job = post(api, "I have been learning Portuguese for two years now.", "g")
    with pytest.raises(llm.TransientError):
        run_job(job.pk)
    run_job(job.pk)  # does not raise: out of attempts, dead-lettered
    job.refresh_from_db()
    assert job.status == "dead" and "invalid JSON after repair" in job.last_error
    assert Turn.objects.get(pk=job.turn_id).skip_reason is None


def test_transient_failures_dead_letter_after_max_attempts(settings, space, api, fake):
    configure(settings, fake.provider())
    settings.ENGRAM = {**settings.ENGRAM, "JOB_MAX_ATTEMPTS": 2}
    fake.push(Reply(status=503), Reply(status=503))
    job = post(api, "I have been learning Portuguese for two years now.", "d")
    with pytest.raises(llm.TransientError):
        run_job(job.pk)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "dead" and "HTTP 503" in job.last_error


def test_budget_exhaustion_falls_back_to_rules(settings, space, api, fake):
    configure(settings, fake.provider(), budget=1)
    first = post(api, "I love climbing and bouldering at the local gym.", "b1")
    run_job(first.pk)
    second = post(api, "I live in Porto near the river these days.", "b2")
    run_job(second.pk)
    second.refresh_from_db()
    assert second.result["extractor"] == "rules:budget"
    assert MemoryItem.objects.filter(space=space, predicate="lives_in", object="Porto").exists()


def test_secrets_never_reach_the_llm_or_the_database(settings, space, api, fake):
    configure(settings, fake.provider())
    secret = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    job = post(api, f"I use the OpenAI key {secret} for my side project at home.", "s")
    run_job(job.pk)
    assert fake.raw_bodies and all(secret.encode() not in raw for raw in fake.raw_bodies)
    assert "[REDACTED:openai_key]" in json.dumps(fake.requests)
    assert secret not in Turn.objects.get(pk=job.turn_id).text
    assert not MemoryItem.objects.filter(text__contains=secret).exists()
