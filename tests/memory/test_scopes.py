"""Scopes through the HTTP API: a project key linked to a user space reads
both (one ranking, each result labelled with its space), writes take
`scope`, the pipeline routes personal facts to the user space and project
facts to the project, and a space the key is not linked to never appears."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from memory.models import ApiKey, IngestJob, MemoryItem, Space, Turn
from memory.services.spaces import create_api_key

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]


def _post(client: Client, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json.dumps(body), content_type="application/json")


def _ok(client: Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = _post(client, path, body)
    assert response.status_code < 300, (path, response.content)
    return response.json()


@pytest.fixture
def linked(client_for) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Project "acme" linked to user space "sam"; "other" is a third space
    holding the same words, never linked."""
    _, project_key = create_api_key(space_name="acme", user_space_name="sam")
    _, user_key = create_api_key(space_name="sam")
    _, other_key = create_api_key(space_name="other")
    return {
        "project": client_for(project_key),
        "user": client_for(user_key),
        "other": client_for(other_key),
    }


def _seed(linked: dict[str, Any]) -> None:
    _ok(linked["user"], "/api/v1/memory/facts", {"text": "Sam drinks oolong tea every morning"})
    _ok(linked["project"], "/api/v1/memory/facts", {"text": "The acme build caches oolong assets"})
    _ok(linked["other"], "/api/v1/memory/facts", {"text": "Other team brews oolong tea daily"})


def test_create_api_key_links_a_project_key_to_a_user_space(db):  # type: ignore[no-untyped-def]
    call_command(
        "create_api_key", "--space", "proj", "--user-space", "me", stdout=open("/dev/null", "w")
    )
    key = ApiKey.objects.get(space__name="proj")
    assert key.space.kind == "project"
    assert key.user_space is not None and key.user_space.name == "me"
    assert key.user_space.kind == "user"
    # New spaces without a link are user spaces, as every existing one is.
    call_command("create_api_key", "--space", "solo", stdout=open("/dev/null", "w"))
    assert Space.objects.get(name="solo").kind == "user"


def test_create_api_key_refuses_links_that_break_the_kinds(db):  # type: ignore[no-untyped-def]
    Space.objects.create(name="person")  # a user space, as spaces are by default
    with pytest.raises(CommandError, match="only a project or shared space"):
        call_command("create_api_key", "--space", "person", "--user-space", "me")
    Space.objects.create(name="team", kind="project")
    with pytest.raises(CommandError, match="not a user space"):
        call_command("create_api_key", "--space", "proj", "--user-space", "team")
    with pytest.raises(CommandError, match="another space"):
        call_command("create_api_key", "--space", "proj", "--user-space", "proj")
    # --kind project turns an existing space into a project that may link.
    call_command(
        "create_api_key",
        "--space",
        "person",
        "--kind",
        "project",
        "--user-space",
        "me",
        stdout=open("/dev/null", "w"),
    )
    assert Space.objects.get(name="person").kind == "project"


@pytest.mark.parametrize("path", ["/api/v1/recall", "/api/v1/memory/search"])
def test_a_linked_pair_fuses_with_labels(linked, path):  # type: ignore[no-untyped-def]
    _seed(linked)
    results = _ok(linked["project"], path, {"query": "oolong", "k": 10})["results"]
    labels = {r["space"] for r in results}
    assert labels == {"acme", "sam"}, results
    texts = {r["space"]: r["text"] for r in results}
    assert "oolong tea every morning" in texts["sam"]
    assert "caches oolong assets" in texts["acme"]
    # One ranking: each channel ranked both spaces' candidates together (two
    # rankings side by side would put both first).
    assert sorted(r["channels"]["bm25_items"] for r in results) == [1, 2]
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)


def test_the_search_tool_fuses_too(linked):  # type: ignore[no-untyped-def]
    _seed(linked)
    answer = _ok(linked["project"], "/api/v1/tools/memory_search", {"query": "oolong"})
    assert {row["space"] for row in answer["results"]} == {"acme", "sam"}


def test_an_unlinked_space_never_appears(linked):  # type: ignore[no-untyped-def]
    _seed(linked)
    for path in ("/api/v1/recall", "/api/v1/memory/search"):
        body = _post(linked["project"], path, {"query": "oolong tea brews daily", "k": 50})
        assert "other" not in {r["space"] for r in body.json()["results"]}
        assert "Other team" not in body.content.decode()
    # The link is one way: the user space's own key does not see the project.
    mine = _ok(linked["user"], "/api/v1/recall", {"query": "oolong", "k": 50})["results"]
    assert {r["space"] for r in mine} == {"sam"}
    # A key without a link reads its own space alone.
    theirs = _ok(linked["other"], "/api/v1/recall", {"query": "oolong", "k": 50})["results"]
    assert {r["space"] for r in theirs} == {"other"}


# Recall for /context runs on a helper thread with its own connection: the
# rows must be committed for it to see them.
@pytest.mark.django_db(transaction=True)
def test_context_takes_the_user_block_from_the_user_space(linked):  # type: ignore[no-untyped-def]
    _seed(linked)
    linked["user"].put(
        "/api/v1/core/user",
        json.dumps({"text": "Sam, prefers tea."}),
        content_type="application/json",
    )
    linked["project"].put(
        "/api/v1/core/agent",
        json.dumps({"text": "Build with make."}),
        content_type="application/json",
    )
    blocks = linked["project"].get("/api/v1/context", {"query": "oolong tea"}).json()["blocks"]
    assert "Sam, prefers tea." in blocks["core_user"]
    assert "Build with make." in blocks["core_agent"]
    assert "oolong tea every morning" in blocks["recalled"]
    assert "caches oolong assets" in blocks["recalled"]
    assert "Other team" not in json.dumps(blocks)


def test_writes_take_scope(linked):  # type: ignore[no-untyped-def]
    project = linked["project"]
    mine = _ok(project, "/api/v1/memory/facts", {"text": "Sam is left-handed", "scope": "user"})
    ours = _ok(project, "/api/v1/memory/facts", {"text": "Acme ships on Tuesdays"})
    assert (mine["space"], ours["space"]) == ("sam", "acme")
    assert MemoryItem.objects.get(pk=int(mine["id"])).space.name == "sam"
    assert MemoryItem.objects.get(pk=int(ours["id"])).space.name == "acme"
    explicit = _ok(project, "/api/v1/memory/facts", {"text": "Acme uses Go", "scope": "project"})
    assert explicit["space"] == "acme"

    turn = _ok(
        project,
        "/api/v1/turns",
        {"session_id": "s", "role": "user", "text": "note to self", "scope": "user"},
    )
    assert turn["space"] == "sam"
    assert Turn.objects.get(pk=int(turn["id"])).space.name == "sam"
    batch = _ok(
        project,
        "/api/v1/turns/batch",
        {
            "scope": "user",
            "turns": [
                {"session_id": "s", "role": "user", "text": "mine"},
                {"session_id": "s", "role": "user", "text": "ours", "scope": "project"},
            ],
        },
    )
    spaces = [Turn.objects.get(pk=int(i)).space.name for i in batch["ids"]]
    assert spaces == ["sam", "acme"]

    saved = _ok(
        project,
        "/api/v1/memory/save",
        {"block": "auto", "text": "Sam rides a bike to work", "scope": "user"},
    )
    assert MemoryItem.objects.get(pk=int(saved["id"])).space.name == "sam"
    # The user block of core memory goes to the user space unless told otherwise.
    _ok(project, "/api/v1/memory/save", {"block": "user", "text": "Name: Sam."})
    assert "Name: Sam." in linked["user"].get("/api/v1/core/user").json()["text"]


def test_scope_user_without_a_link_is_a_400(linked):  # type: ignore[no-untyped-def]
    other = linked["other"]
    for path, body in (
        ("/api/v1/memory/facts", {"text": "Likes tea", "scope": "user"}),
        ("/api/v1/turns", {"session_id": "s", "role": "user", "text": "hi", "scope": "user"}),
        ("/api/v1/memory/save", {"block": "auto", "text": "Likes tea", "scope": "user"}),
        ("/api/v1/tools/memory_save", {"text": "Likes tea", "scope": "user"}),
    ):
        response = _post(other, path, body)
        assert response.status_code == 400, (path, response.content)
        assert "linked to a user space" in response.json()["detail"], response.content
    assert not MemoryItem.objects.filter(space__name="other").exists()
    bad = _post(other, "/api/v1/memory/facts", {"text": "Likes tea", "scope": "team"})
    assert bad.status_code == 422 and "scope" in bad.json()["detail"]


MIXED = (
    "I'm vegetarian and my sister is Anna. This repo uses pnpm and we decided to deploy on Fridays."
)


def _say(client: Client, text: str, capture) -> Turn:  # type: ignore[no-untyped-def]
    with capture(execute=True):
        answer = _ok(client, "/api/v1/turns", {"session_id": "s", "role": "user", "text": text})
    return Turn.objects.get(pk=int(answer["id"]))


def _facts(space: str) -> set[tuple[str, str]]:
    return set(
        MemoryItem.objects.filter(space__name=space, expired_at=None).values_list(
            "predicate", "object"
        )
    )


def test_extraction_routes_personal_facts_to_the_user_space(
    linked, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    turn = _say(linked["project"], MIXED, django_capture_on_commit_callbacks)
    assert _facts("sam") == {("diet", "vegetarian"), ("sister", "Anna")}
    assert _facts("acme") == {("uses", "pnpm"), ("decided", "deploy on Fridays")}
    job = IngestJob.objects.get(turn=turn)
    assert job.payload == {"user_space": Space.objects.get(name="sam").pk}
    routing = job.result["routing"]
    assert routing["user"]["space"] == "sam" and len(routing["user"]["candidates"]) == 2
    assert routing["project"]["space"] == "acme" and len(routing["project"]["candidates"]) == 2
    assert {a["scope"] for a in job.result["actions"]} == {"user", "project"}
    # A routed fact carries no link to the project's conversation.
    personal = MemoryItem.objects.get(space__name="sam", predicate="sister")
    assert personal.source_session_id is None
    # And the fused read finds both halves of what was said.
    results = _ok(linked["project"], "/api/v1/recall", {"query": "Anna pnpm", "k": 10})["results"]
    found = {(r["space"], r["type"]) for r in results}
    assert ("sam", "fact") in found and ("acme", "fact") in found


def test_without_a_link_extraction_keeps_everything_in_the_space(
    linked, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    turn = _say(linked["other"], MIXED, django_capture_on_commit_callbacks)
    assert _facts("other") == {
        ("diet", "vegetarian"),
        ("sister", "Anna"),
        ("uses", "pnpm"),
        ("decided", "deploy on Fridays"),
    }
    job = IngestJob.objects.get(turn=turn)
    assert job.payload == {} and "routing" not in job.result
    assert not MemoryItem.objects.filter(space__name="sam").exists()
