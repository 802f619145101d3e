"""Another space's ids answer 404 on every endpoint that takes an id (a fact,
a consolidation run, a core block version, a reported host), in the API and
in the dashboard, and the other space's rows are exactly as they were."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from consolidation.models import ConsolidationRun
from environment.models import EnvironmentSnapshot
from memory.models import (
    CoreBlock,
    CoreBlockVersion,
    IngestJob,
    MemoryItem,
    Relation,
    Space,
    Turn,
)
from memory.services.spaces import create_api_key

pytestmark = pytest.mark.django_db


def post(client: Client, path: str, body: object):  # type: ignore[no-untyped-def]
    return client.post(path, json.dumps(body), content_type="application/json")


def fact(client: Client, **body: Any) -> int:
    response = post(client, "/api/v1/memory/facts", body)
    assert response.status_code == 200, response.content
    return int(response.json()["id"])


def state(space: Space) -> dict[str, Any]:
    """Everything the requests below could touch in `space`."""
    return {
        "items": sorted(
            MemoryItem.objects.filter(space=space).values_list(
                "pk", "text", "status", "expired_at", "valid_to", "superseded_by_id", "metadata"
            )
        ),
        "relations": sorted(
            Relation.objects.filter(space=space).values_list("pk", "expired_at", "valid_to")
        ),
        "core": sorted(
            CoreBlock.objects.filter(space=space).values_list("label", "text", "version")
        ),
        "core_versions": sorted(
            CoreBlockVersion.objects.filter(block__space=space).values_list(
                "block__label", "version", "text"
            )
        ),
        "runs": sorted(
            ConsolidationRun.objects.filter(space=space).values_list("pk", "status", "report")
        ),
        "hosts": sorted(
            EnvironmentSnapshot.objects.filter(space=space).values_list("pk", "hostname")
        ),
        "turns": sorted(Turn.objects.filter(space=space).values_list("pk", "ref", "text")),
        "jobs": sorted(IngestJob.objects.filter(space=space).values_list("pk", "status")),
    }


@pytest.fixture
def theirs(client_for) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The other space, with one of everything that has an id."""
    _, key = create_api_key(space_name="other-space")
    other = client_for(key)
    space = Space.objects.get(name="other-space")
    lives = fact(
        other, text="Priya lives in Pune", subject="Priya", predicate="lives_in", object="Pune"
    )
    forgotten = fact(
        other, text="Priya keeps bees", subject="Priya", predicate="keeps", object="bees"
    )
    assert post(other, "/api/v1/memory/forget", {"item_id": str(forgotten)}).json() == {
        "forgotten": 1
    }
    for text in ("Priya is a nurse", "Priya is a nurse in Pune", "Priya is a nurse in Goa"):
        r = other.put("/api/v1/core/user", {"text": text}, content_type="application/json")
        assert r.status_code == 200, r.content
    run = ConsolidationRun.objects.create(space=space, status="done", report="tidy")
    r = post(
        other,
        "/api/v1/environment/report",
        {"hostname": "b-laptop", "os": "Linux", "home": "/home/b"},
    )
    assert r.status_code == 200, r.content
    r = post(
        other, "/api/v1/turns", {"session_id": "s1", "role": "user", "text": "hi", "ref": "r1"}
    )
    assert r.status_code == 202, r.content
    job = IngestJob.objects.filter(space=space).get()
    IngestJob.objects.filter(pk=job.pk).update(status=IngestJob.Status.DEAD)
    return {
        "client": other,
        "space": space,
        "fact": lives,
        "forgotten": forgotten,
        "run": run.pk,
        "version": CoreBlock.objects.get(space=space, label="user").version,
        "job": job.pk,
    }


def test_the_other_spaces_ids_are_real_for_its_own_key(theirs):
    other = theirs["client"]
    assert other.get(f"/api/v1/consolidation/runs/{theirs['run']}").status_code == 200
    assert other.get("/api/v1/environment?host=b-laptop").json()["hostname"] == "b-laptop"
    diff = other.get(f"/api/v1/core/user/diff?from={theirs['version'] - 1}")
    assert diff.status_code == 200 and "Goa" in diff.json()["diff"]


def test_api_answers_404_for_another_spaces_ids_and_leaves_them_alone(api, space, theirs):
    before = state(theirs["space"])
    item, run, version = theirs["fact"], theirs["run"], theirs["version"]
    # This space's user block exists but has no version as high as theirs.
    assert api.get("/api/v1/core/user").json()["version"] < version - 1

    calls = [
        ("post", "/api/v1/memory/forget", {"item_id": str(item)}),
        ("post", "/api/v1/memory/forget", {"item_id": str(item), "hard": True}),
        ("post", "/api/v1/memory/forget", {"item_id": str(theirs["forgotten"])}),
        ("get", f"/api/v1/consolidation/runs/{run}", None),
        ("get", f"/api/v1/core/user/diff?from={version - 1}&to={version}", None),
        ("post", "/api/v1/core/user/rollback", {"version": version - 1}),
        ("get", "/api/v1/environment?host=b-laptop", None),
        ("post", "/api/v1/environment/resolve-path", {"path": "~/notes", "host": "b-laptop"}),
        ("post", "/api/v1/environment/find-binary", {"name": "python3", "host": "b-laptop"}),
    ]
    for method, path, body in calls:
        response = api.get(path) if method == "get" else post(api, path, body)
        assert response.status_code == 404, (path, body, response.content)
        assert response.json()["detail"], (path, body)

    # Their run is not in this space's list, nor their versions in this history.
    assert run not in [r["id"] for r in api.get("/api/v1/consolidation/runs").json()["runs"]]
    assert all("Priya" not in v["text"] for v in api.get("/api/v1/core/user/history").json())
    # Same subject and predicate here supersede nothing there; same session
    # and ref here are a new turn here.
    saved = post(
        api,
        "/api/v1/memory/facts",
        {
            "text": "Priya lives in Goa",
            "subject": "Priya",
            "predicate": "lives_in",
            "object": "Goa",
        },
    ).json()
    assert saved["action"] == "ADD" and saved["superseded"] == []
    turn = post(
        api, "/api/v1/turns", {"session_id": "s1", "role": "user", "text": "hi", "ref": "r1"}
    )
    assert turn.status_code == 202 and turn.json()["queued"] is True

    assert state(theirs["space"]) == before
    assert Turn.objects.filter(space=space, ref="r1").count() == 1


def test_dashboard_answers_404_for_another_spaces_facts_and_leaves_them_alone(
    client, space, theirs
):
    curator = get_user_model().objects.create_user("curator", password="x" * 20, is_staff=True)
    client.force_login(curator)
    # The curator is looking at this space ("other-space" sorts first).
    assert client.get(f"/library/?space={space.name}").status_code == 200
    before = state(theirs["space"])
    item, forgotten = theirs["fact"], theirs["forgotten"]

    assert client.get(f"/facts/{item}/history/").status_code == 404
    for path, form in [
        (f"/facts/{item}/edit/", {"text": "Priya lives in Goa"}),
        (f"/facts/{item}/forget/", {}),
        (f"/facts/{item}/forget/", {"hard": "1"}),
        (f"/facts/{forgotten}/restore/", {}),
    ]:
        assert client.post(path, form).status_code == 404, (path, form)
    # Core versions and job ids are looked up in the curated space only.
    client.post(f"/core/user/rollback/{theirs['version'] - 1}/")
    client.post("/jobs/retry/", {"job": str(theirs["job"])})
    diff = client.get(f"/core/user/diff/{theirs['version']}/").content.decode()
    assert "Goa" not in diff

    assert state(theirs["space"]) == before
    # Switching to their space shows their fact: the 404s were about the space.
    assert client.get(f"/facts/{item}/history/?space=other-space").status_code == 200
