"""History, diff, undo, rollback and optimistic locking of core blocks."""

from __future__ import annotations

import pytest

from memory.models import CoreBlockVersion


@pytest.fixture(autouse=True)
def _mirror_dir(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror"}


def put(api, label, **body):  # type: ignore[no-untyped-def]
    return api.put(f"/api/v1/core/{label}", body, content_type="application/json")


def test_put_with_the_right_version_writes_and_with_a_stale_one_answers_409(api):
    first = put(api, "user", text="Name: Ana", expected_version=0)
    assert first.status_code == 200 and first.json()["version"] == 1
    # A second curator still holding version 0 must not overwrite silently.
    stale = put(api, "user", text="Name: Anna", expected_version=0)
    assert stale.status_code == 409
    assert "version 1" in stale.json()["detail"]
    assert api.get("/api/v1/core/user").json()["text"] == "Name: Ana"
    ok = put(api, "user", text="Name: Anna", expected_version=1)
    assert ok.status_code == 200 and ok.json()["version"] == 2


def test_put_of_an_unchanged_text_makes_no_version(api):
    put(api, "agent", text="Use tabs")
    again = put(api, "agent", text="Use tabs\n")
    assert again.json()["version"] == 1
    assert CoreBlockVersion.objects.count() == 1


def test_history_lists_versions_newest_first_with_authors(api):
    put(api, "user", text="a", reason="first")
    put(api, "user", text="a\nb")
    history = api.get("/api/v1/core/user/history").json()
    assert [h["version"] for h in history] == [2, 1]
    assert history[1]["reason"] == "first" and history[0]["text"] == "a\nb"
    assert history[0]["author"].startswith("api:")
    assert len(api.get("/api/v1/core/user/history?limit=1").json()) == 1
    assert api.get("/api/v1/core/user/history?limit=0").status_code == 422


def test_diff_between_versions(api):
    put(api, "user", text="Lives in Pune\nLikes chess")
    put(api, "user", text="Lives in Berlin\nLikes chess")
    body = api.get("/api/v1/core/user/diff?from=1&to=2").json()
    assert "-Lives in Pune" in body["diff"] and "+Lives in Berlin" in body["diff"]
    assert "Likes chess" in body["diff"]
    from_empty = api.get("/api/v1/core/user/diff?from=0").json()
    assert from_empty["to_version"] == 2 and "+Lives in Berlin" in from_empty["diff"]
    assert api.get("/api/v1/core/user/diff?from=1&to=9").status_code == 404
    assert api.get("/api/v1/core/user/diff").status_code == 422


def test_undo_and_rollback_add_versions_and_never_rewrite_history(api):
    put(api, "agent", text="v1 text")
    put(api, "agent", text="v2 text")
    put(api, "agent", text="v3 text")
    undone = api.post("/api/v1/core/agent/undo", {}, content_type="application/json").json()
    assert (undone["version"], undone["text"]) == (4, "v2 text")
    rolled = api.post(
        "/api/v1/core/agent/rollback", {"version": 1}, content_type="application/json"
    ).json()
    assert (rolled["version"], rolled["text"]) == (5, "v1 text")
    texts = list(
        CoreBlockVersion.objects.filter(block__label="agent")
        .order_by("version")
        .values_list("text", "reason")
    )
    assert texts == [
        ("v1 text", "edit"),
        ("v2 text", "edit"),
        ("v3 text", "edit"),
        ("v2 text", "rollback to v2"),
        ("v1 text", "rollback to v1"),
    ]
    assert (
        api.post(
            "/api/v1/core/agent/rollback", {"version": 42}, content_type="application/json"
        ).status_code
        == 404
    )
    stale = api.post(
        "/api/v1/core/agent/rollback",
        {"version": 2, "expected_version": 3},
        content_type="application/json",
    )
    assert stale.status_code == 409


def test_undo_of_an_untouched_block_answers_422(api):
    response = api.post("/api/v1/core/user/undo", {}, content_type="application/json")
    assert response.status_code == 422


def test_blocks_of_another_space_are_not_visible(api, client_for):
    from memory.services.spaces import create_api_key

    put(api, "user", text="Secret of space one")
    _, other_key = create_api_key(space_name="other-space")
    other = client_for(other_key)
    assert other.get("/api/v1/core/user").json()["text"] == ""
    assert other.get("/api/v1/core/user/history").json() == []
