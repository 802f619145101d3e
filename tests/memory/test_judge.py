"""The write judge against the fake OpenAI-format server, through the real
HTTP API and pipeline: its verdicts change what is written, a slow, garbled,
over-budget or missing judge leaves the rules' decision with the reason
recorded, and every adjudication is listed by GET /api/v1/adjudications."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest

from memory.models import Adjudication, IngestJob, MemoryItem, Turn
from memory.services.spaces import create_api_key
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.django_db(transaction=False)
_refs = itertools.count()

SUMMER = "I enjoy hiking in the Swiss Alps every summer with my friends."
WINTER = "I enjoy hiking in the Swiss Alps every winter with my friends."  # similarity 0.75
VEGETARIAN = "Anna from the climbing gym is vegetarian."
NOT_VEGETARIAN = "Anna from the climbing gym is not vegetarian."  # the rules DEFER it


class Judge:
    """Answers the judge's requests with `reply` (after `delay` seconds);
    extraction gets the turn's first sentence (the fake's default) and the
    general resolver no decisions, so only the rules and the judge decide."""

    def __init__(self) -> None:
        self.reply: str = '{"verdicts": []}'
        self.delay = 0.0
        self.asked: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str | None:
        system = body["messages"][0]["content"]
        if "You judge uncertain writes" in system:
            self.asked.append(body["messages"][1]["content"])
            if self.delay:
                time.sleep(self.delay)
            return self.reply
        if "maintain a memory of facts" in system:
            return '{"decisions": []}'
        return None

    def verdict(self, **answer: Any) -> None:
        self.reply = json.dumps({"verdicts": [{"case": 0, **answer}]})


@pytest.fixture
def judge(settings):  # type: ignore[no-untyped-def]
    answers = Judge()
    with FakeLLM(answers) as server:
        settings.ENGRAM = {
            **settings.ENGRAM,
            "LLM_PROVIDERS": [server.provider(name="main")],
            "LLM_BUDGET_PER_HOUR": 100,
            "JUDGE": "main",
            "JUDGE_TIMEOUT_SECONDS": 2.0,
        }
        yield answers


@pytest.fixture
def say(api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    def post(text: str, *, client: Any = None) -> Turn:
        body = {"session_id": "s1", "role": "user", "text": text, "ref": f"j{next(_refs)}"}
        with django_capture_on_commit_callbacks(execute=True):
            response = (client or api).post("/api/v1/turns", body, content_type="application/json")
        assert response.status_code == 202, response.content
        return Turn.objects.get(pk=int(response.json()["id"]))

    return post


def action_of(turn: Turn) -> str:
    job = IngestJob.objects.get(turn=turn)
    assert job.status == "done", job.last_error
    return str(job.result["actions"][0]["action"])


def item(text: str) -> MemoryItem:
    return MemoryItem.objects.get(text=text)


def test_a_merge_verdict_reinforces_the_neighbour(space, judge, say):
    say(SUMMER)
    assert judge.asked == []  # no neighbour, nothing uncertain
    judge.verdict(verdict="merge")
    turn = say(WINTER)
    assert action_of(turn) == "NOOP"
    first = item(SUMMER)
    assert first.frequency == 2 and not MemoryItem.objects.filter(text=WINTER).exists()
    assert len(judge.asked) == 1 and f"id={first.pk}: {SUMMER}" in judge.asked[0]
    record = Adjudication.objects.get()
    assert (record.kind, record.rules_action, record.verdict, record.action) == (
        "band",
        "ADD",
        "merge",
        "NOOP",
    )
    assert record.judge_used and record.judge == "main" and record.fallback_reason == ""
    assert record.item_id == first.pk and record.neighbour_ids == [first.pk]
    assert record.candidate_text == WINTER and record.similarity == 0.75


def test_an_accept_verdict_adds_it(space, judge, say):
    say(SUMMER)
    judge.verdict(verdict="accept")
    turn = say(WINTER)
    assert action_of(turn) == "ADD"
    assert item(WINTER).status == "active" and item(SUMMER).frequency == 1
    record = Adjudication.objects.get()
    assert record.verdict == "accept" and record.item_id == item(WINTER).pk


def test_an_accept_verdict_overrules_a_near_duplicate_merge(space, judge, say, settings):
    # similarity 0.875: the rules merge it (>= 0.8), unless the band reaches 0.9
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE_MERGE_ABOVE": 0.9}
    say("I enjoy hiking in the Swiss Alps every summer with friends.")
    judge.verdict(verdict="accept")
    turn = say("I enjoy hiking in the Swiss Alps every summer with good friends.")
    assert action_of(turn) == "ADD"
    record = Adjudication.objects.get()
    assert (record.rules_action, record.verdict, record.similarity) == ("NOOP", "accept", 0.875)


@pytest.mark.parametrize(
    ("setting", "value"), [("JUDGE_ACCEPT_BELOW", 0.8), ("JUDGE_MERGE_ABOVE", 0.7)]
)
def test_outside_the_band_the_rules_decide_unasked(space, judge, say, settings, setting, value):
    settings.ENGRAM = {**settings.ENGRAM, setting: value}
    say(SUMMER)
    judge.verdict(verdict="merge")
    assert action_of(say(WINTER)) == "ADD"  # 0.75: below the band, or above it
    assert judge.asked == [] and not Adjudication.objects.exists()


def test_a_contradiction_below_the_minimum_is_not_confirmed(space, judge, say, settings):
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE_CONTRADICTION_MIN": 1.01}
    say(VEGETARIAN)
    judge.verdict(contradicts=False)
    assert action_of(say(NOT_VEGETARIAN)) == "DEFER"
    assert judge.asked == []


def test_a_defer_verdict_keeps_it_pending_review(space, judge, say):
    say(SUMMER)
    judge.verdict(verdict="defer")
    turn = say(WINTER)
    assert action_of(turn) == "DEFER"
    pending = item(WINTER)
    assert pending.status == "pending_review"
    assert pending.metadata["contradicts"] == [item(SUMMER).pk]
    assert Adjudication.objects.get().action == "DEFER"


@pytest.mark.parametrize(
    ("contradicts", "action", "status", "verdict"),
    [(True, "DEFER", "pending_review", "contradicts"), (False, "ADD", "active", "consistent")],
)
def test_the_judge_confirms_or_dismisses_a_contradiction(
    space, judge, say, contradicts, action, status, verdict
):
    say(VEGETARIAN)
    judge.verdict(contradicts=contradicts)
    turn = say(NOT_VEGETARIAN)
    assert action_of(turn) == action and item(NOT_VEGETARIAN).status == status
    record = Adjudication.objects.get()
    assert (record.kind, record.rules_action, record.verdict) == ("contradiction", "DEFER", verdict)
    assert "[contradiction]" in judge.asked[0]


def test_a_slow_judge_times_out_and_the_rules_decide(space, judge, say, settings):
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE_TIMEOUT_SECONDS": 0.3}
    say(SUMMER)
    judge.verdict(verdict="merge")
    judge.delay = 1.5
    turn = say(WINTER)
    assert action_of(turn) == "ADD"  # the rules: new information
    assert item(WINTER).status == "active"
    record = Adjudication.objects.get()
    assert not record.judge_used and record.fallback_reason == "timeout"
    assert record.verdict == "" and record.action == "ADD"
    assert 300 <= record.elapsed_ms < 1400


@pytest.mark.parametrize(
    "reply",
    [
        "Sure! They look the same to me, merge them.",
        '{"verdicts": [{"case": 0, "verdict": "maybe"}]}',  # unknown verdict
        '{"verdicts": [{"case": 0, "contradicts": "yes"}]}',  # not a boolean
    ],
)
def test_a_garbled_answer_leaves_the_rules_decision(space, judge, say, reply):
    say(VEGETARIAN)
    judge.reply = reply
    turn = say(NOT_VEGETARIAN)
    assert action_of(turn) == "DEFER"  # what the rules decided
    record = Adjudication.objects.get()
    assert not record.judge_used and record.fallback_reason.startswith("invalid answer")
    assert len(judge.asked) == 1  # no repair request: the rules have an answer


def test_an_answer_for_another_case_leaves_the_rules_decision(space, judge, say):
    say(SUMMER)
    judge.reply = '{"verdicts": [{"case": 3, "verdict": "merge"}]}'
    turn = say(WINTER)
    assert action_of(turn) == "ADD"
    assert Adjudication.objects.get().fallback_reason == "no verdict for this case"


def test_a_spent_budget_leaves_the_rules_decision(space, judge, say, settings):
    # Two extraction calls fit; the judge's would be the third.
    settings.ENGRAM = {**settings.ENGRAM, "LLM_BUDGET_PER_HOUR": 2}
    say(SUMMER)
    turn = say(WINTER)
    assert action_of(turn) == "ADD" and judge.asked == []
    assert Adjudication.objects.get().fallback_reason == "budget exhausted"


def test_judge_off_asks_nothing_and_records_nothing(space, judge, say, settings):
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE": ""}
    say(SUMMER)
    judge.verdict(verdict="merge")
    turn = say(WINTER)
    assert action_of(turn) == "ADD"
    assert judge.asked == [] and not Adjudication.objects.exists()


def test_an_unknown_judge_name_is_recorded_not_asked(space, judge, say, settings):
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE": "missing"}
    say(SUMMER)
    turn = say(WINTER)
    assert action_of(turn) == "ADD" and judge.asked == []
    record = Adjudication.objects.get()
    assert not record.judge_used and "no provider 'missing'" in record.fallback_reason


def test_llm_names_the_first_provider(space, judge, say, settings):
    settings.ENGRAM = {**settings.ENGRAM, "JUDGE": "llm"}
    say(SUMMER)
    judge.verdict(verdict="merge")
    assert action_of(say(WINTER)) == "NOOP"
    assert Adjudication.objects.get().judge == "main"


def test_the_api_lists_adjudications_newest_first_in_pages(space, judge, say, api, client_for):
    say(SUMMER)
    judge.verdict(verdict="accept")
    say(WINTER)
    say(VEGETARIAN)
    judge.verdict(contradicts=True)
    say(NOT_VEGETARIAN)
    first = api.get("/api/v1/adjudications?limit=1")
    assert first.status_code == 200, first.content
    page = first.json()
    assert [r["kind"] for r in page["adjudications"]] == ["contradiction"]
    row = page["adjudications"][0]
    assert row["candidate_text"] == NOT_VEGETARIAN and row["verdict"] == "contradicts"
    assert row["action"] == "DEFER" and row["judge_used"] is True
    assert row["item_id"] == item(NOT_VEGETARIAN).pk and row["elapsed_ms"] > 0
    assert page["count"] == 2
    rest = api.get("/api/v1/adjudications?limit=1&offset=1").json()
    assert [r["verdict"] for r in rest["adjudications"]] == ["accept"]
    assert api.get("/api/v1/adjudications?offset=2").json()["adjudications"] == []
    # Another space's key sees none of them.
    _, other = create_api_key(space_name="elsewhere")
    assert client_for(other).get("/api/v1/adjudications").json() == {
        "count": 0,
        "adjudications": [],
    }
    assert api.get("/api/v1/adjudications?limit=0").status_code == 422


def test_a_hard_forget_takes_the_adjudications_quoting_the_fact(space, judge, say):
    from memory.services.forget import forget

    say(SUMMER)
    judge.verdict(verdict="merge")
    say(WINTER)  # merged into SUMMER: the record quotes WINTER under SUMMER's id
    say(VEGETARIAN)
    judge.verdict(contradicts=True)
    say(NOT_VEGETARIAN)
    assert Adjudication.objects.count() == 2
    forget(space=space, item_id=item(SUMMER).pk, hard=True)
    assert list(Adjudication.objects.values_list("candidate_text", flat=True)) == [NOT_VEGETARIAN]


def test_the_admin_shows_adjudications_read_only(space, judge, say):
    from django.contrib.auth.models import User
    from django.test import Client

    say(SUMMER)
    judge.verdict(verdict="merge")
    say(WINTER)
    record = Adjudication.objects.get()
    client = Client()
    client.force_login(User.objects.create_superuser("curator", "c@example.com", "pw"))
    listing = client.get("/admin/memory/adjudication/")
    assert listing.status_code == 200 and b"merge" in listing.content
    assert client.get("/admin/memory/adjudication/add/").status_code == 403
    change = client.post(f"/admin/memory/adjudication/{record.pk}/change/", {"verdict": "defer"})
    assert change.status_code in (200, 403)
    record.refresh_from_db()
    assert record.verdict == "merge"
