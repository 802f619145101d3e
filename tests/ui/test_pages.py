"""The dashboard pages through Django's test client: staff only, every page
renders, and the write actions go through the services."""

from __future__ import annotations

import pytest
from django.test import Client

from consolidation.models import ConsolidationRun
from memory.models import AuditEvent, IngestJob, MemoryItem, Session, Space, Turn

pytestmark = pytest.mark.django_db

PAGES = [
    "/",
    "/library/",
    "/core/",
    "/ask/?q=Anna",
    "/log/",
    "/ops/",
    "/review/",
    "/skills/",
    "/graph/",
]


@pytest.mark.parametrize("url", PAGES + ["/graph.json"])
def test_it_sends_anonymous_visitors_to_the_login(url):
    response = Client().get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_it_refuses_users_who_are_not_staff(client, db):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_user("plain", password="x" * 20))
    assert client.get("/library/").status_code == 302


@pytest.mark.parametrize("url", PAGES)
def test_every_page_renders_with_the_status_ribbon(staff_client, memory, url):
    response = staff_client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert "Memory active" in body and "test-space" in body


def test_the_ribbon_counts_live_facts_and_entities(staff_client, memory, space):
    body = staff_client.get("/library/").content.decode()
    live = MemoryItem.objects.filter(space=space, expired_at=None, status="active").count()
    assert f"<b>{live}</b> facts" in body


def test_library_filters_by_validity_and_text(staff_client, memory):
    live = staff_client.get("/library/?status=active").content.decode()
    assert "Anna lives in Lisbon." in live
    expired = staff_client.get("/library/?status=superseded").content.decode()
    assert "Anna lives in Porto." in expired and "Anna lives in Lisbon." not in expired
    tea = staff_client.get("/library/?q=green+tea").content.decode()
    assert "green tea" in tea and "Lisbon" not in tea
    prefs = staff_client.get("/library/?kind=preference").content.decode()
    assert "green tea" in prefs and "Lisbon" not in prefs
    anna = staff_client.get("/library/?entity=anna").content.decode()
    assert "Lisbon" in anna and "green tea" not in anna


def test_the_old_facts_page_moved_to_the_library_with_its_query(staff_client, memory):
    response = staff_client.get("/facts/?q=tea&kind=preference")
    assert response.status_code == 301
    assert response["Location"] == "/library/?q=tea&kind=preference"
    assert staff_client.get("/audit/").status_code == 301


def test_history_shows_what_superseded_what(staff_client, memory):
    body = staff_client.get(f"/facts/{memory['old'].pk}/history/").content.decode()
    assert body.index("Anna lives in Porto.") < body.index("Anna lives in Lisbon.")
    assert "superseded" in body and "current" in body


def test_history_of_another_spaces_fact_is_not_found(staff_client, memory):
    other = Space.objects.create(name="other")
    from memory.services.facts import save_fact

    theirs = save_fact(space=other, text="Bob likes chess.").item
    staff_client.get("/library/?space=test-space")
    assert staff_client.get(f"/facts/{theirs.pk}/history/").status_code == 404
    assert staff_client.post(f"/facts/{theirs.pk}/forget/").status_code == 404


def test_edit_supersedes_instead_of_overwriting(staff_client, memory, space):
    tea = memory["tea"]
    response = staff_client.post(f"/facts/{tea.pk}/edit/", {"text": "The user prefers black tea."})
    assert response.status_code == 302
    tea.refresh_from_db()
    assert tea.expired_at is not None and tea.superseded_by is not None
    assert tea.superseded_by.text == "The user prefers black tea."


def test_an_edit_keeps_the_subject_and_when_the_fact_became_true(staff_client, memory):
    from datetime import UTC, datetime

    anna = memory["new"]
    began = datetime(2024, 5, 1, tzinfo=UTC)
    MemoryItem.objects.filter(pk=anna.pk).update(valid_from=began)
    staff_client.post(f"/facts/{anna.pk}/edit/", {"text": "anna lives in Lisbon, Portugal."})
    anna.refresh_from_db()
    edited = anna.superseded_by
    assert edited is not None and edited.subject == "Anna"
    assert edited.valid_from == began and edited.is_live


def test_forget_and_restore(staff_client, memory, space):
    tea = memory["tea"]
    staff_client.post(f"/facts/{tea.pk}/forget/")
    tea.refresh_from_db()
    assert tea.status == MemoryItem.Status.FORGOTTEN
    assert AuditEvent.objects.filter(space=space, action="forget").exists()
    staff_client.post(f"/facts/{tea.pk}/restore/")
    tea.refresh_from_db()
    assert tea.status == MemoryItem.Status.ACTIVE


def test_core_edit_makes_a_version_and_refuses_a_stale_one(staff_client, space):
    staff_client.get("/core/")
    ok = staff_client.post(
        "/core/user/edit/", {"text": "Name: Sam", "expected_version": "0"}, follow=True
    )
    assert "version 1" in ok.content.decode()
    stale = staff_client.post(
        "/core/user/edit/", {"text": "Name: Someone else", "expected_version": "0"}, follow=True
    )
    assert "Not saved" in stale.content.decode()
    body = staff_client.get("/core/").content.decode()
    assert "Name: Sam" in body and "Someone else" not in body
    diff = staff_client.get("/core/user/diff/1/").content.decode()
    assert "+Name: Sam" in diff


def test_core_rollback_restores_an_old_text_as_a_new_version(staff_client, space):
    staff_client.get("/core/")
    staff_client.post("/core/user/edit/", {"text": "Name: Sam", "expected_version": "0"})
    staff_client.post("/core/user/edit/", {"text": "Name: Samuel", "expected_version": "1"})
    staff_client.post("/core/user/rollback/1/")
    from memory.models import CoreBlock

    block = CoreBlock.objects.get(space=space, label="user")
    assert (block.text, block.version) == ("Name: Sam", 3)


def test_ask_shows_results_with_provenance(staff_client, memory):
    body = staff_client.get("/ask/?q=Where+does+Anna+live").content.decode()
    assert "Anna lives in Lisbon." in body
    assert "known " in body
    bad = staff_client.get("/ask/?q=Anna&as_of=not-a-date").content.decode()
    assert "must each be a date" in bad


def test_ask_as_of_sees_the_old_value(staff_client, memory, space):
    from datetime import timedelta

    old, new = memory["old"], memory["new"]
    # Date the change so "as of" before it has a meaning in valid time.
    MemoryItem.objects.filter(pk=old.pk).update(
        valid_from=old.created_at - timedelta(days=30),
        valid_to=new.created_at - timedelta(days=2),
        created_at=old.created_at - timedelta(days=30),
        expired_at=new.created_at - timedelta(days=2),
    )
    MemoryItem.objects.filter(pk=new.pk).update(
        valid_from=new.created_at - timedelta(days=2), created_at=new.created_at - timedelta(days=2)
    )
    day = (new.created_at - timedelta(days=10)).date().isoformat()
    body = staff_client.get(f"/ask/?q=Anna+lives&as_of={day}").content.decode()
    assert "Porto" in body and "Anna lives in Lisbon." not in body


def test_dead_jobs_can_be_retried(staff_client, space):
    session = Session.objects.create(space=space, external_id="s1")
    turn = Turn.objects.create(space=space, session=session, role="user", text="hello there")
    job = IngestJob.objects.create(
        space=space, turn=turn, idempotency_key="t1", status="dead", attempts=5, last_error="boom"
    )
    body = staff_client.get("/ops/").content.decode()
    assert "boom" in body and "Retry all 1" in body
    staff_client.post("/jobs/retry/", {"job": [job.pk]})
    job.refresh_from_db()
    assert job.status != IngestJob.Status.DEAD


def test_improve_now_starts_one_run(staff_client, space):
    staff_client.post("/consolidation/run/")
    staff_client.post("/consolidation/run/")
    runs = ConsolidationRun.objects.filter(space=space)
    assert runs.count() == 1


def test_graph_json_has_entities_and_live_and_expired_edges(staff_client, memory):
    data = staff_client.get("/graph.json").json()
    names = {n["name"] for n in data["nodes"]}
    assert {"Anna", "Lisbon"} <= names
    assert any(e["live"] for e in data["edges"])


def test_space_switcher_changes_the_space(staff_client, memory):
    Space.objects.create(name="second")
    body = staff_client.get("/library/?space=second").content.decode()
    assert "Anna lives" not in body
    # Remembered for the next page.
    assert "No memories match" in staff_client.get("/library/").content.decode()
    assert staff_client.get("/library/?space=nope").status_code == 404


def test_with_no_space_chosen_the_dashboard_opens_the_one_in_use(staff_client, db):
    from django.utils import timezone

    Space.objects.create(name="aardvark")  # first by name, never used
    Space.objects.create(name="work", last_activity_at=timezone.now())
    response = staff_client.get("/library/")
    assert response.context["space"].name == "work"
    assert '<option value="work" selected>' in response.content.decode()
