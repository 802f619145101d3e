"""Forgetting: soft by default (restorable), hard deletes everything derived,
everything wipes a space so that no table or index holds anything of it."""

from __future__ import annotations

import numpy as np
import pytest
from django.apps import apps
from django.db import connection

from memory.models import (
    AuditEvent,
    Belief,
    CoreBlockVersion,
    Entity,
    MemoryItem,
    MemoryVector,
    PalaceEntry,
    Relation,
    Skill,
    Space,
    Turn,
)
from memory.search import search
from memory.services import core, forget, mirror


@pytest.fixture(autouse=True)
def _mirror_dir(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror"}


def remember(api, **body):  # type: ignore[no-untyped-def]
    response = api.post("/api/v1/memory/remember_fact", body, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def forget_call(api, **body):  # type: ignore[no-untyped-def]
    return api.post("/api/v1/memory/forget", body, content_type="application/json")


def fts_rows(target, space_id):  # type: ignore[no-untyped-def]
    if connection.vendor != "sqlite":
        return None
    from memory.search._fts import index_row_count

    return index_row_count(target, space_id)


def add_vector(space, item):  # type: ignore[no-untyped-def]
    vec = np.ones(4, dtype=np.float32)
    MemoryVector.objects.create(space=space, item=item, model="test", dim=4, vec=vec.tobytes())


def test_soft_forget_by_id_is_restorable(api, space):
    saved = remember(api, text="Priya plays the violin")
    item_id = saved["id"]
    response = forget_call(api, item_id=item_id)
    assert response.status_code == 200 and response.json() == {"forgotten": 1}
    item = MemoryItem.objects.get(pk=item_id)
    assert item.status == MemoryItem.Status.FORGOTTEN
    assert not search("item", space_id=space.pk, query="violin")
    assert AuditEvent.objects.filter(space=space, action="forget", target_id=item_id).exists()
    # Forgetting it again forgets nothing more.
    assert forget_call(api, item_id=item_id).json() == {"forgotten": 0}
    forget.restore(space=space, item_id=item_id)
    assert [h.id for h in search("item", space_id=space.pk, query="violin")] == [int(item_id)]


def test_forget_by_query_needs_every_word(api, space):
    remember(api, text="Anna's address is 12 Elm Street")
    remember(api, text="The office address is 4 Oak Road")
    assert forget_call(api, query="Anna address").json() == {"forgotten": 1}
    live = MemoryItem.objects.filter(space=space, status="active").values_list("text", flat=True)
    assert list(live) == ["The office address is 4 Oak Road"]


def test_soft_forget_takes_the_line_out_of_core_memory_as_a_version(api, space):
    saved = remember(api, text="Priya is allergic to peanuts")
    api.post(
        "/api/v1/memory/save",
        {"block": "user", "action": "add", "text": "Priya is allergic to peanuts"},
        content_type="application/json",
    )
    forget_call(api, item_id=saved["id"])
    block = core.load_block(space=space, label="user")
    assert "peanuts" not in block.text
    assert "peanuts" in core.version_text(block=block, version=block.version - 1)


def test_bad_forget_requests_answer_4xx(api, client_for):
    assert forget_call(api).status_code == 422
    assert forget_call(api, item_id="1", query="x").status_code == 422
    assert forget_call(api, item_id="abc").status_code == 422
    assert forget_call(api, item_id="999999").status_code == 404
    assert forget_call(api, everything=True, confirm="wrong-name").status_code == 422
    assert forget_call(api, query="  ").status_code == 422
    from memory.services.spaces import create_api_key

    saved = remember(api, text="Priya keeps her passport in the hall safe")
    _, other_key = create_api_key(space_name="other-space")
    assert forget_call(client_for(other_key), item_id=saved["id"]).status_code == 404


def test_hard_forget_deletes_the_fact_and_what_only_it_supported(api, space):
    kept = remember(
        api, text="Priya works at Infosys", subject="Priya", predicate="works_at", object="Infosys"
    )
    saved = remember(
        api,
        text="Priya lives in Zanzibar",
        subject="Priya",
        predicate="lives_in",
        object="Zanzibar",
    )
    item = MemoryItem.objects.get(pk=saved["id"])
    add_vector(space, item)
    belief = Belief.objects.create(space=space, text="Priya likes Zanzibar")
    belief.evidence.add(item)
    assert Relation.objects.filter(item=item).exists()
    with_line = api.post(
        "/api/v1/memory/save",
        {"block": "user", "action": "add", "text": "Priya lives in Zanzibar"},
        content_type="application/json",
    )
    assert with_line.json()["ok"]
    AuditEvent.objects.create(
        space=space, action="note", target_type="x", detail={"t": "Zanzibar!"}
    )

    response = forget_call(api, item_id=saved["id"], hard=True)
    assert response.status_code == 200 and response.json()["forgotten"] == 1

    assert not MemoryItem.objects.filter(pk=saved["id"]).exists()
    assert not MemoryVector.objects.filter(space=space).exists()
    assert not Relation.objects.filter(space=space, rel="lives_in").exists()
    assert not Entity.objects.filter(space=space, norm="zanzibar").exists()
    # The fact that was not forgotten keeps its entities and edge.
    assert MemoryItem.objects.filter(pk=kept["id"]).exists()
    assert Entity.objects.filter(space=space, norm="infosys").exists()
    assert Entity.objects.filter(space=space, norm="priya").exists()
    assert not Belief.objects.filter(pk=belief.pk).exists()
    assert not search("item", space_id=space.pk, query="Zanzibar", live_only=False)
    if connection.vendor == "sqlite":
        assert fts_rows("item", space.pk) == 1
    for event in AuditEvent.objects.filter(space=space):
        assert "Zanzibar" not in str(event.detail)
    for version in CoreBlockVersion.objects.filter(block__space=space):
        assert "Zanzibar" not in version.text
    path = mirror.write_block(block=core.load_block(space=space, label="user"))
    assert "Zanzibar" not in path.read_text()


def test_hard_forget_by_query_also_deletes_matching_turns(api, space):
    api.post(
        "/api/v1/turns",
        {"session_id": "s1", "role": "user", "text": "My locker code is in the blue drawer"},
        content_type="application/json",
    )
    api.post(
        "/api/v1/turns",
        {"session_id": "s1", "role": "user", "text": "The weather is nice in the park today"},
        content_type="application/json",
    )
    remember(api, text="The locker code is kept in the blue drawer")
    count = forget_call(api, query="locker drawer", hard=True).json()["forgotten"]
    assert count >= 2
    assert not search("turn", space_id=space.pk, query="locker", live_only=False)
    assert not search("item", space_id=space.pk, query="locker", live_only=False)
    assert Turn.objects.filter(space=space, text__contains="weather").exists()


def _space_models():  # type: ignore[no-untyped-def]
    found = []
    for model in apps.get_models():
        names = {f.name for f in model._meta.get_fields()}
        if "space" in names and model is not Space:
            found.append(model)
    return found


def test_forget_everything_leaves_nothing_of_the_space(api, space, client_for, tmp_path):
    from consolidation.models import ConsolidationRun
    from environment.models import EnvironmentSnapshot
    from memory.models import LlmUsage
    from memory.services.spaces import create_api_key

    for i, text in enumerate(
        ["My name is Priya and I live in Pune", "My sister Anna works at Google"]
    ):
        api.post(
            "/api/v1/turns",
            {"session_id": "s1", "role": "user", "text": text, "ref": f"t{i}"},
            content_type="application/json",
        )
    saved = remember(
        api, text="Priya owns a cat named Miso", subject="Priya", predicate="owns", object="Miso"
    )
    add_vector(space, MemoryItem.objects.get(pk=saved["id"]))
    api.post(
        "/api/v1/memory/save",
        {"block": "agent", "action": "add", "text": "Repo uses pnpm"},
        content_type="application/json",
    )
    mirror.write_block(block=core.load_block(space=space, label="agent"))
    Skill.objects.create(space=space, name="deploy", body="steps")
    Belief.objects.create(space=space, text="Priya likes cats")
    EnvironmentSnapshot.objects.create(space=space, source="agent", hostname="laptop", data={})
    ConsolidationRun.objects.create(space=space, status="done")
    from django.utils import timezone

    LlmUsage.objects.create(space=space, hour=timezone.now().replace(minute=0), calls=1)

    _, other_key = create_api_key(space_name="other-space")
    other = client_for(other_key)
    remember(other, text="The other space keeps its cat facts")
    other_space = Space.objects.get(name="other-space")

    wiped = forget_call(api, everything=True, confirm=space.name).json()
    assert wiped["forgotten"] > 10
    report = wiped["verification"]
    assert report["verified"] is True and report["found"] == 0
    places = {(c["place"], c["name"]) for c in report["checked"]}
    assert ("table", "memory_turn") in places and ("vectors", "memory_memoryvector") in places
    assert {c["place"] for c in report["checked"]} >= {"table", "vectors", "cache", "mirror"}

    # The one row the space keeps: that it was wiped, by whom, how many rows;
    # nothing of what they held.
    (event,) = AuditEvent.objects.filter(space=space)
    assert (event.action, event.target_type) == ("wipe", "space")
    assert event.detail["rows"] == wiped["forgotten"]
    assert event.detail["tables"]["memory.Turn"] == 2
    dumped = str(event.detail)
    for secret in ("Priya", "Pune", "Anna", "Miso", "pnpm", "deploy"):
        assert secret not in dumped

    for model in _space_models():
        field = model._meta.get_field("space")
        if getattr(field, "related_model", None) is not Space:
            continue
        if model._meta.label == "memory.ApiKey":
            continue
        rows = model.objects.filter(space=space)
        if model is AuditEvent:
            rows = rows.exclude(pk=event.pk)
        left = rows.count()
        assert left == 0, f"{model._meta.label} still has {left} rows of the space"
    assert not CoreBlockVersion.objects.filter(block__space=space).exists()
    for target in ("item", "turn", "summary"):
        assert not search(
            target, space_id=space.pk, query="Priya cat Miso pnpm Anna", live_only=False
        )
        if connection.vendor == "sqlite":
            assert fts_rows(target, space.pk) == 0
    assert not (tmp_path / "mirror" / space.name).exists()
    # The other space is untouched, and this one's key still works.
    assert search("item", space_id=other_space.pk, query="cat")
    assert api.get("/api/v1/core/user").json()["text"] == ""


# --- the graph edges of a soft-forgotten or archived fact ----------------------------


def edge_state(item_id):  # type: ignore[no-untyped-def]
    """{relation id: expired?} for the item's edges."""
    return {r.pk: r.expired_at is not None for r in Relation.objects.filter(item_id=int(item_id))}


def drawn(space):  # type: ignore[no-untyped-def]
    """The dashboard graph's edges as (src name, rel, dst name, live)."""
    from memory.selectors import graph_data

    data = graph_data(space=space)
    names = {n["id"]: n["name"] for n in data["nodes"]}
    return {(names[e["src"]], e["rel"], names[e["dst"]], e["live"]) for e in data["edges"]}


def test_soft_forget_closes_the_facts_edges_and_restore_reopens_them(api, space):
    kept = remember(
        api, text="Priya works at Infosys", subject="Priya", predicate="works_at", object="Infosys"
    )
    saved = remember(
        api, text="Priya plays the sitar", subject="Priya", predicate="plays", object="sitar"
    )
    [rel_id] = edge_state(saved["id"])
    assert edge_state(saved["id"]) == {rel_id: False}
    assert ("Priya", "plays", "sitar", True) in drawn(space)

    assert forget_call(api, item_id=saved["id"]).json() == {"forgotten": 1}
    assert edge_state(saved["id"]) == {rel_id: True}
    assert not any(rel == "plays" for _, rel, _, _ in drawn(space))
    # The other fact about the same person keeps its live edge.
    assert list(edge_state(kept["id"]).values()) == [False]
    assert ("Priya", "works_at", "Infosys", True) in drawn(space)
    assert api.get("/api/v1/status").json()["relations"] == 1

    forget.restore(space=space, item_id=saved["id"])
    assert edge_state(saved["id"]) == {rel_id: False}
    assert ("Priya", "plays", "sitar", True) in drawn(space)
    item = MemoryItem.objects.get(pk=saved["id"])
    assert item.status == MemoryItem.Status.ACTIVE
    assert "suspended_relations" not in item.metadata
    restored = AuditEvent.objects.get(space=space, action="restore", target_id=saved["id"])
    assert restored.detail["relations"] == 1


def test_restore_reopens_only_the_edges_the_forget_closed(api, space):
    old = remember(
        api, text="Priya lives in Pune", subject="Priya", predicate="lives_in", object="Pune"
    )
    new = remember(
        api, text="Priya lives in Goa", subject="Priya", predicate="lives_in", object="Goa"
    )
    assert new["superseded"] == [old["id"]]
    [old_rel] = edge_state(old["id"])
    assert edge_state(old["id"]) == {old_rel: True}  # closed by the supersession

    # Forgetting and restoring the superseded fact leaves its edge closed.
    assert forget_call(api, item_id=old["id"]).json() == {"forgotten": 1}
    forget.restore(space=space, item_id=old["id"])
    assert edge_state(old["id"]) == {old_rel: True}
    assert ("Priya", "lives_in", "Pune", False) in drawn(space)

    # The current fact's edge comes back; the old one stays history.
    assert forget_call(api, item_id=new["id"]).json() == {"forgotten": 1}
    forget.restore(space=space, item_id=new["id"])
    assert all(not expired for expired in edge_state(new["id"]).values())
    assert edge_state(old["id"]) == {old_rel: True}


def test_an_archived_fact_leaves_the_graph_and_the_dashboard_restores_it(
    api, space, client, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    stale = remember(
        api,
        text="Priya once tried the oboe",
        subject="Priya",
        predicate="tried",
        object="oboe",
        importance=0.1,
    )
    fresh = remember(
        api, text="Priya teaches maths", subject="Priya", predicate="teaches", object="maths"
    )
    long_ago = timezone.now() - timedelta(days=400)
    MemoryItem.objects.filter(pk=stale["id"]).update(last_seen=long_ago)
    # Out of review scheduling (as a backfilled entry is): only then does it decay.
    PalaceEntry.objects.filter(item_id=stale["id"]).update(due_at=None)

    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            "/api/v1/consolidate", {"steps": ["decay"]}, content_type="application/json"
        )
    assert started.status_code == 202, started.content
    run = api.get(f"/api/v1/consolidation/runs/{started.json()['run_id']}").json()
    assert run["status"] == "done" and run["steps"]["decay"]["counts"]["archived"] == 1, run

    assert MemoryItem.objects.get(pk=stale["id"]).status == MemoryItem.Status.ARCHIVED
    assert all(edge_state(stale["id"]).values())
    assert not any(edge_state(fresh["id"]).values())
    assert ("Priya", "tried", "oboe", False) in drawn(space)

    curator = get_user_model().objects.create_user("curator", password="x" * 20, is_staff=True)
    client.force_login(curator)
    response = client.post(f"/facts/{stale['id']}/restore/?space={space.name}")
    assert response.status_code == 302
    item = MemoryItem.objects.get(pk=stale["id"])
    assert item.status == MemoryItem.Status.ACTIVE
    assert item.last_seen > long_ago  # seen now, or the next pass archives it again
    assert not any(edge_state(stale["id"]).values())
    assert ("Priya", "tried", "oboe", True) in drawn(space)


# --- the verification report of a hard forget ------------------------------------------


def test_a_hard_forget_answers_where_it_looked_and_finds_leftovers(api, space):
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.auth.models import User
    from django.contrib.contenttypes.models import ContentType

    text = "Priya's locker at the gym is number 4471"
    saved = remember(api, text=text)
    item = MemoryItem.objects.get(pk=saved["id"])
    add_vector(space, item)
    # A curator once edited it in the admin, whose log names it by its text.
    LogEntry.objects.create(
        user=User.objects.create_user("curator"),
        content_type=ContentType.objects.get_for_model(MemoryItem),
        object_id=str(item.pk),
        object_repr=text[:30],
        action_flag=CHANGE,
    )
    # A place no forget step cleans: the report must see it.
    Skill.objects.create(space=space, name="gym", body=f"Remember: {text}.")

    answer = forget_call(api, item_id=saved["id"], hard=True).json()
    report = answer["verification"]
    found = {(c["place"], c["name"]): c["found"] for c in report["checked"]}
    assert found[("table", "memory_skill")] == 1
    assert report["verified"] is False and report["found"] == 1
    assert text not in str(report)  # places and counts, never the text
    for place in [
        ("table", "memory_memoryitem"),
        ("table", "memory_auditevent"),
        ("table", "memory_coreblockversion"),
        ("table", "django_admin_log"),
        ("vectors", "memory_memoryvector"),
        ("cache", "vector matrix (this process)"),
        ("mirror", f"{space.name}/"),
        ("files", "data directory"),
    ]:
        assert found[place] == 0, place
    fts_names = {name for place, name in found if place == "fts"}
    # SQLite: every FTS5 index, document chunks' included; PostgreSQL: the
    # search facade of items, turns and summaries.
    from django.db import connection

    from memory.search._fts import TABLES

    assert len(fts_names) == (len(TABLES) if connection.vendor == "sqlite" else 3)
    assert not LogEntry.objects.filter(object_repr__contains="locker").exists()
    # Inside this test's transaction nothing could be reclaimed, and it says so.
    assert report["storage"]["done"] is False

    Skill.objects.filter(space=space).delete()
    again = remember(api, text="Anna's bicycle lock code is written in the red notebook")
    clean = forget_call(api, item_id=again["id"], hard=True).json()["verification"]
    assert clean["verified"] is True and clean["found"] == 0


def test_soft_forget_answers_no_report(api):
    saved = remember(api, text="Priya collects vintage fountain pens")
    assert forget_call(api, item_id=saved["id"]).json() == {"forgotten": 1}
