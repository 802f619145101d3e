"""By-id operations across a linked pair: an id from the key's linked user
space is acted on in that space (audited there, the acting key as actor);
the evidence gate accepts refs of such results from the same batch. Ids and
refs of any other space stay what a missing one is (see also
tests/foundation/test_cross_space_matrix.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from memory.models import ApiKey, AuditEvent, MemoryItem
from memory.services.spaces import create_api_key

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]


def _ok(client: Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json.dumps(body), content_type="application/json")
    assert response.status_code < 300, (path, response.content)
    return response.json()


def _status(client: Client, path: str, body: dict[str, Any]) -> int:
    return client.post(path, json.dumps(body), content_type="application/json").status_code


@pytest.fixture
def pair(client_for) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    _, project_key = create_api_key(space_name="acme", user_space_name="sam")
    _, user_key = create_api_key(space_name="sam")
    _, other_key = create_api_key(space_name="other")
    project = client_for(project_key)
    mine = _ok(client_for(user_key), "/api/v1/memory/facts", {"text": "Sam rides a red bike"})
    theirs = _ok(client_for(other_key), "/api/v1/memory/facts", {"text": "Olga rides a red bike"})
    prefix = ApiKey.objects.get(space__name="acme").prefix
    return {
        "project": project,
        "mine": mine["id"],
        "theirs": theirs["id"],
        "actor": f"api:{prefix}",
    }


def _audited(space: str, action: str, item_id: str) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(
            space__name=space, action=action, target_type="item", target_id=str(item_id)
        )
    )


def test_update_of_a_user_space_id_corrects_it_in_the_user_space(pair):  # type: ignore[no-untyped-def]
    out = _ok(
        pair["project"],
        "/api/v1/tools/memory_update",
        {"id": pair["mine"], "text": "Sam rides a blue bike"},
    )
    new = MemoryItem.objects.get(pk=int(out["id"]))
    old = MemoryItem.objects.get(pk=int(pair["mine"]))
    assert new.space.name == "sam" and new.text == "Sam rides a blue bike"
    assert old.superseded_by_id == new.pk  # history kept, the correction supersedes
    assert not MemoryItem.objects.filter(space__name="acme").exists()
    events = AuditEvent.objects.filter(space__name="sam", actor=pair["actor"])
    assert events.exists()
    assert not AuditEvent.objects.filter(space__name="acme").exclude(action="assess").exists()


def test_report_and_grade_of_a_user_space_id_land_there(pair):  # type: ignore[no-untyped-def]
    before = float(MemoryItem.objects.get(pk=int(pair["mine"])).importance)
    out = _ok(
        pair["project"], "/api/v1/tools/memory_report", {"id": pair["mine"], "outcome": "success"}
    )
    assert out["importance"] == pytest.approx(min(1.0, before + 0.05))
    graded = _ok(pair["project"], "/api/v1/tools/memory_report", {"id": pair["mine"], "grade": 4})
    assert graded["next_due"] is not None
    events = _audited("sam", "report", pair["mine"])
    assert len(events) == 2 and {e.actor for e in events} == {pair["actor"]}
    assert not _audited("acme", "report", pair["mine"])


def test_review_of_a_user_space_id_reveals_it(pair):  # type: ignore[no-untyped-def]
    out = _ok(pair["project"], "/api/v1/tools/memory_review", {"id": pair["mine"]})
    assert out["item"]["text"] == "Sam rides a red bike"
    assert [c["id"] for c in out["chain"]] == [pair["mine"]]


@pytest.mark.parametrize("path", ["/api/v1/tools/memory_forget", "/api/v1/memory/forget"])
def test_forget_of_a_user_space_id_forgets_it_there(pair, path):  # type: ignore[no-untyped-def]
    assert _ok(pair["project"], path, {"item_id": pair["mine"]})["forgotten"] == 1
    assert MemoryItem.objects.get(pk=int(pair["mine"])).status != MemoryItem.Status.ACTIVE
    events = _audited("sam", "forget", pair["mine"]) or list(
        AuditEvent.objects.filter(space__name="sam", action__startswith="forget")
    )
    assert events and events[0].actor == pair["actor"]
    assert not AuditEvent.objects.filter(space__name="acme", action__startswith="forget").exists()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/tools/memory_update", {"text": "probe"}),
        ("/api/v1/tools/memory_report", {"grade": 5}),
        ("/api/v1/tools/memory_review", {}),
        ("/api/v1/tools/memory_forget", {}),
        ("/api/v1/memory/forget", {}),
    ],
)
def test_a_third_spaces_id_stays_not_found(pair, path, body):  # type: ignore[no-untyped-def]
    key = "item_id" if path.endswith("forget") else "id"
    audited = AuditEvent.objects.filter(space__name="other").count()
    assert _status(pair["project"], path, {**body, key: pair["theirs"]}) == 404
    theirs = MemoryItem.objects.get(pk=int(pair["theirs"]))
    assert theirs.status == MemoryItem.Status.ACTIVE and theirs.superseded_by_id is None
    assert AuditEvent.objects.filter(space__name="other").count() == audited


def test_assess_accepts_refs_of_user_space_results_of_the_same_batch(pair, client_for):  # type: ignore[no-untyped-def]
    project = pair["project"]
    found = _ok(project, "/api/v1/tools/memory_search", {"query": "red bike", "k": 10})
    rows = found["results"]
    assert {r["space"] for r in rows} == {"sam"}, rows  # never "other"
    out = _ok(
        project,
        "/api/v1/tools/memory_assess",
        {
            "batch_id": found["batch_id"],
            "evidence_refs": [rows[0]["ref"]],
            "next_strategy": "answer",
            "sufficient": True,
        },
    )
    assert out["sufficient"] is True and out["accepted_refs"] == [rows[0]["ref"]]
    # A ref from the other space's own batch is not this batch's.
    _, other_key = create_api_key(space_name="other", name="second")
    theirs = _ok(client_for(other_key), "/api/v1/tools/memory_search", {"query": "red bike"})
    other_ref = theirs["results"][0]["ref"]
    out = _ok(
        project,
        "/api/v1/tools/memory_assess",
        {
            "batch_id": found["batch_id"],
            "evidence_refs": [other_ref],
            "next_strategy": "answer",
            "sufficient": True,
        },
    )
    assert out["sufficient"] is False and out["rejected_refs"] == [other_ref]
    # And the other space's batch id is not found through the linked key.
    assert (
        _status(
            project,
            "/api/v1/tools/memory_assess",
            {"batch_id": theirs["batch_id"], "next_strategy": "answer", "sufficient": True},
        )
        == 404
    )


# --- browsing and fact chains across the link --------------------------------------------------


def test_the_timeline_browses_both_spaces_labelled(pair, client_for):  # type: ignore[no-untyped-def]
    _ok(pair["project"], "/api/v1/memory/facts", {"text": "The acme build uses make"})
    for order in ("created", "tour"):
        rows = _ok(pair["project"], "/api/v1/tools/memory_timeline", {"order": order})["items"]
        labels = {r["text"]: r["space"] for r in rows}
        assert labels == {"The acme build uses make": "acme", "Sam rides a red bike": "sam"}
        if order == "tour":  # each palace's route, the key's own space first
            assert [r["space"] for r in rows] == ["acme", "sam"]
    # An unlinked key of the user space sees only its own.
    _, user_key = create_api_key(space_name="sam", name="own")
    rows = _ok(client_for(user_key), "/api/v1/tools/memory_timeline", {})["items"]
    assert [r["text"] for r in rows] == ["Sam rides a red bike"]


def test_episodes_around_a_user_space_id_read_that_spaces_conversation(pair, client_for):  # type: ignore[no-untyped-def]
    _, user_key = create_api_key(space_name="sam", name="turns")
    mine = client_for(user_key)
    _ok(mine, "/api/v1/turns", {"session_id": "s1", "role": "user", "text": "I got a bike today"})
    _ok(pair["project"], "/api/v1/turns", {"session_id": "p1", "role": "user", "text": "ci is red"})
    out = _ok(pair["project"], "/api/v1/tools/memory_episodes", {"around": pair["mine"]})
    texts = [t["text"] for s in out["sessions"] for t in s["turns"]]
    assert texts == ["I got a bike today"]
    assert (
        _status(pair["project"], "/api/v1/tools/memory_episodes", {"around": pair["theirs"]}) == 404
    )


def test_fact_chains_read_and_supersede_across_the_link(pair):  # type: ignore[no-untyped-def]
    project = pair["project"]
    written = _ok(
        project,
        "/api/v1/tools/memory_facts",
        {
            "scope": "user",
            "facts": [
                {
                    "entity": "Sam",
                    "content": "Sam lives in Oslo.",
                    "predicate": "lives_in",
                    "object": "Oslo",
                }
            ],
        },
    )["written"]
    oslo = written[0]["id"]
    assert MemoryItem.objects.get(pk=int(oslo)).space.name == "sam"
    # The new value supersedes the old one where it lives: in the user space.
    moved = _ok(
        project,
        "/api/v1/tools/memory_facts",
        {
            "facts": [
                {
                    "entity": "Sam",
                    "content": "Sam lives in Bergen.",
                    "object": "Bergen",
                    "replaces": oslo,
                }
            ]
        },
    )["written"][0]
    assert moved["superseded"] == [oslo], moved
    bergen = MemoryItem.objects.get(pk=int(moved["id"]))
    assert bergen.space.name == "sam" and bergen.predicate == "lives_in"
    assert MemoryItem.objects.get(pk=int(oslo)).superseded_by_id == bergen.pk
    assert not MemoryItem.objects.filter(space__name="acme").exists()
    # Read mode finds the chain in the user space, labelled, history kept.
    chain = _ok(project, "/api/v1/tools/memory_facts", {"entity": "Sam", "include_invalid": True})
    assert {(r["space"], r["text"], r["current"]) for r in chain["facts"]} == {
        ("sam", "Sam lives in Bergen.", True),
        ("sam", "Sam lives in Oslo.", False),
    }
    # Another space's id is not found, and nothing is written.
    failed = _ok(
        project,
        "/api/v1/tools/memory_facts",
        {
            "facts": [
                {"entity": "Olga", "content": "Olga lives in Rome.", "replaces": pair["theirs"]}
            ]
        },
    )["failed"]
    assert failed and "not found" in failed[0]["error"]
    assert MemoryItem.objects.filter(space__name="other").count() == 1


def test_a_shared_space_links_a_user_space(db):  # type: ignore[no-untyped-def]
    key, _ = create_api_key(space_name="team", kind="shared", user_space_name="sam")
    assert key.space.kind == "shared" and key.user_space is not None
    assert key.user_space.name == "sam"
