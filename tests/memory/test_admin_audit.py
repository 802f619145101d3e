"""Edits and deletions made in the Django admin land in the space's audit log,
naming the model, the id and the changed fields, never the content; the
admin's own change log keeps no text of what was deleted."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from memory.models import AuditEvent, MemoryItem, Skill, Turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):  # type: ignore[no-untyped-def]
    client.force_login(User.objects.create_superuser("curator", "c@example.com", "pw"))
    return client


def remember(api, text):  # type: ignore[no-untyped-def]
    r = api.post("/api/v1/memory/remember_fact", {"text": text}, content_type="application/json")
    assert r.status_code == 200, r.content
    return int(r.json()["id"])


def test_forgetting_facts_in_the_admin_is_audited_without_their_text(api, space, staff) -> None:  # type: ignore[no-untyped-def]
    ids = [
        remember(api, "Priya's safe combination is hidden in the atlas"),
        remember(api, "Priya's spare house key sits under the blue flowerpot"),
    ]
    r = staff.post(
        "/admin/memory/memoryitem/",
        {"action": "forget_hard", "_selected_action": ids},
    )
    assert r.status_code == 302
    assert not MemoryItem.objects.filter(pk__in=ids).exists()
    events = AuditEvent.objects.filter(space=space, action="forget", actor="admin:curator")
    assert sorted(i for e in events for i in e.detail["ids"]) == sorted(ids)
    assert all(e.detail["hard"] for e in events)
    logged = " ".join(LogEntry.objects.values_list("object_repr", flat=True))
    logged += " ".join(str(e.detail) for e in AuditEvent.objects.filter(space=space))
    assert "atlas" not in logged and "flowerpot" not in logged


def test_deleting_one_turn_from_its_page_is_audited(api, space, staff) -> None:  # type: ignore[no-untyped-def]
    r = api.post(
        "/api/v1/turns",
        {"session_id": "s", "role": "user", "text": "My bank PIN hint is the cat's birthday"},
        content_type="application/json",
    )
    assert r.status_code == 202
    turn = Turn.objects.get(space=space)
    r = staff.post(f"/admin/memory/turn/{turn.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302
    event = AuditEvent.objects.get(space=space, action="admin_delete", target_type="turn")
    assert event.target_id == str(turn.pk) and "birthday" not in str(event.detail)


def test_an_admin_edit_names_the_fields_it_changed(space, staff) -> None:  # type: ignore[no-untyped-def]
    skill = Skill.objects.create(space=space, name="deploy", body="run the script")
    created, updated = skill.created_at, skill.updated_at
    r = staff.post(
        f"/admin/memory/skill/{skill.pk}/change/",
        {
            "space": space.pk,
            "name": "deploy",
            "description": "",
            "body": "run the release script with the staging token",
            "enabled": "on",
            "is_draft": "on",
            "source": "manual",
            "evidence_turn_refs": "[]",
            "usage_count": 0,
            "created_at_0": created.strftime("%Y-%m-%d"),
            "created_at_1": created.strftime("%H:%M:%S"),
            "updated_at_0": updated.strftime("%Y-%m-%d"),
            "updated_at_1": updated.strftime("%H:%M:%S"),
        },
    )
    assert r.status_code == 302, r.content.decode()[:3000]
    event = AuditEvent.objects.get(space=space, action="admin_edit")
    assert event.target_type == "skill" and event.target_id == str(skill.pk)
    assert {"body", "enabled"} <= set(event.detail["fields"])
    assert "staging" not in str(event.detail)
