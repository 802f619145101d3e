"""Hard budgets: a write that would overflow is refused with a merge hint, or
(ENGRAM_CORE_OVERFLOW=demote) the stalest entry becomes a semantic fact."""

from __future__ import annotations

import pytest

from memory.models import CoreBlock, MemoryItem
from memory.services import core
from memory.tokens import estimate_tokens


@pytest.fixture(autouse=True)
def _small_budgets(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {
        **settings.ENGRAM,
        "MIRROR_DIR": tmp_path / "mirror",
        "CORE_USER_BUDGET_TOKENS": 60,
        "CORE_AGENT_BUDGET_TOKENS": 80,
    }


def save(api, **body):  # type: ignore[no-untyped-def]
    response = api.post("/api/v1/memory/save", body, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def fill(api, block="user", n=5):  # type: ignore[no-untyped-def]
    for i in range(n):
        assert save(api, block=block, action="add", text=f"Entry {i}: something worth keeping")[
            "ok"
        ]


def test_block_is_created_with_the_configured_budget(api, space):
    body = api.get("/api/v1/core").json()
    assert [(b["label"], b["budget_tokens"], b["version"]) for b in body] == [
        ("user", 60, 0),
        ("agent", 80, 0),
    ]


def test_overflow_is_refused_with_a_merge_hint(api, space):
    fill(api)
    before = CoreBlock.objects.get(space=space, label="user")
    out = save(api, block="user", action="add", text="One more entry that will not fit at all")
    assert not out["ok"]
    assert "Merge" in out["message"] and "%" in out["message"]
    after = CoreBlock.objects.get(space=space, label="user")
    assert (after.version, after.text) == (before.version, before.text)
    assert estimate_tokens(after.text) <= 60


def test_replace_that_grows_past_the_budget_is_refused(api, space):
    fill(api)
    out = save(
        api, block="user", action="replace", old_text="Entry 0", text="Entry 0: " + "long " * 40
    )
    assert not out["ok"]
    assert "Entry 0: something worth keeping" in core.get_block(space=space, label="user").text


def test_usage_is_reported_and_warns_near_full(api, space):
    fill(api, n=4)
    out = save(api, block="user", action="add", text="Entry 5: x")
    block = CoreBlock.objects.get(space=space, label="user")
    assert out["usage"] == pytest.approx(estimate_tokens(block.text) / 60, abs=1e-3)
    assert out["usage"] > 0.8 and "full" in out["message"]


def test_whole_block_write_over_budget_answers_422(api):
    response = api.put(
        "/api/v1/core/user", {"text": "word " * 200}, content_type="application/json"
    )
    assert response.status_code == 422
    assert "budget" in response.json()["detail"]


def test_demote_moves_the_stalest_entry_to_a_fact(api, space, settings):
    settings.ENGRAM = {**settings.ENGRAM, "CORE_OVERFLOW": "demote"}
    fill(api)
    # Entry 0 is rewritten, so Entry 1 is now the one untouched the longest.
    save(api, block="user", action="replace", old_text="Entry 0", text="Entry 0: refreshed")
    out = save(api, block="user", action="add", text="Entry 9: brand new and important")
    assert out["ok"], out
    assert out["demoted"], out
    text = core.get_block(space=space, label="user").text
    assert "Entry 9: brand new and important" in text
    assert "Entry 1: something worth keeping" not in text
    assert "Entry 0: refreshed" in text
    assert estimate_tokens(text) <= 60
    demoted = MemoryItem.objects.get(space=space, pk=int(out["demoted"][0]))
    assert "Entry 1" in demoted.text


def test_a_demoted_entry_keeps_its_kind(api, space, settings):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "CORE_OVERFLOW": "demote"}
    save(api, block="user", action="add", text="Always answer in British English please")
    save(api, block="user", action="add", text="Works as a nurse at the city hospital")
    fill(api, n=3)
    out = save(api, block="user", action="add", text="Entry 9: brand new and important")
    kinds = {
        item.text: item.kind
        for item in MemoryItem.objects.filter(pk__in=[int(i) for i in out["demoted"]])
    }
    # The stalest entries go first: the instruction, then the job.
    assert kinds.get("Always answer in British English please") == "instruction", kinds
    assert kinds.get("Works as a nurse at the city hospital", "fact") == "fact", kinds


def test_an_entry_bigger_than_the_whole_budget_is_refused_even_in_demote_mode(api, space, settings):
    settings.ENGRAM = {**settings.ENGRAM, "CORE_OVERFLOW": "demote"}
    fill(api, n=2)
    out = save(api, block="user", action="add", text="huge " * 100)
    assert not out["ok"] and "shorten" in out["message"]
    assert "Entry 0" in core.get_block(space=space, label="user").text


def test_blocks_read_together_are_the_blocks_read_one_by_one(space):  # type: ignore[no-untyped-def]
    from memory.models import Space

    core.set_text(space=space, label="user", text="Name: Ada", author="test", reason="")
    person = Space.objects.create(name="person")
    core.set_text(space=person, label="user", text="Name: Grace", author="test", reason="")
    # The agent block of `space` is not stored yet: it is created empty.
    user, agent, own = core.get_blocks([(person, "user"), (space, "agent"), (space, "user")])
    assert (user.space, user.text) == (person, "Name: Grace")
    assert (agent.space, agent.label, agent.text, agent.pk is not None) == (
        space,
        "agent",
        "",
        True,
    )
    assert own.pk == core.get_block(space=space, label="user").pk and own.text == "Name: Ada"
    assert agent.budget_tokens == core.budget_for("agent")
