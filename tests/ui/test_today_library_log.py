"""Today, Library and Log through the test client: what each shows, the
Library's actions through the services, and bad input answered with a
message, never a 500."""

from __future__ import annotations

import pytest

from memory.models import AuditEvent, MemoryItem, Space
from memory.services import audit
from memory.services.facts import save_fact

pytestmark = pytest.mark.django_db


def _messages(response) -> str:  # type: ignore[no-untyped-def]
    return " ".join(str(m) for m in response.context["messages"])


# --- Today --------------------------------------------------------------------------


def test_today_shows_the_hero_heatmap_palace_profile_and_consolidation(staff_client, memory, space):
    from memory.services import core

    core.set_text(space=space, label="user", text="Name: Sam", author="test", reason="t")
    response = staff_client.get("/")
    assert response.status_code == 200
    body = response.content.decode()
    kpis = response.context["kpis"]
    live = MemoryItem.objects.filter(space=space, status="active", expired_at=None).count()
    assert kpis["live"] == live and len(kpis["live_series"]) == 30
    assert kpis["live_series"][-1] >= 3  # the three written today
    assert "<polyline" in body and 'class="heatmap"' in body
    heat = response.context["heat"]
    assert heat["total"] >= 3 and 182 <= len(heat["cells"]) <= 189
    assert "Fact Hall" in body  # the room directory
    assert "Name: Sam" in body and "v1" in body
    assert 'action="/consolidation/run/"' in body


def test_today_counts_open_items(staff_client, memory, space):
    MemoryItem.objects.filter(pk=memory["tea"].pk).update(screen_status="flagged")
    MemoryItem.objects.filter(pk=memory["new"].pk).update(status="pending_review")
    assert staff_client.get("/").context["kpis"]["open"] == 2


def test_today_lists_low_placards_to_refurbish(staff_client, space):
    for i in range(10):
        save_fact(space=space, text=f"The user likes thing number {i} a lot.")
    body = staff_client.get("/").content.decode()
    assert "Placards to refurbish" in body


# --- Library ------------------------------------------------------------------------


def test_library_filters_by_room_kind_status_and_redaction(staff_client, memory, space):
    secret = save_fact(space=space, text="The user's key is [REDACTED:api_key] for the lab.").item
    assert secret is not None
    body = staff_client.get("/library/?redacted=1").content.decode()
    assert "[REDACTED:api_key]" in body and "green tea" not in body
    prefs = staff_client.get("/library/?room=Preference+Pavilion").content.decode()
    assert "green tea" in prefs and "Lisbon" not in prefs
    MemoryItem.objects.filter(pk=memory["tea"].pk).update(screen_status="flagged")
    flagged = staff_client.get("/library/?status=quarantined").content.decode()
    assert "green tea" in flagged and "Lisbon" not in flagged


def test_library_expansion_shows_placard_slot_valid_time_and_source(staff_client, memory):
    body = staff_client.get("/library/?q=Lisbon").content.decode()
    assert "Room#slot" in body and "Fact Hall#" in body and "Source" in body
    assert f"/facts/{memory['new'].pk}/history/" in body


@pytest.mark.parametrize(
    "query", ["kind=nonsense", "status=gone", "sort=sideways", "room=Attic", "page=abc", "page=999"]
)
def test_library_unknown_filter_values_get_a_message(staff_client, memory, query):
    response = staff_client.get(f"/library/?{query}")
    assert response.status_code == 200
    if not query.startswith("page"):
        assert _messages(response)


def test_library_sorts_oldest_and_in_tour_order(staff_client, memory):
    oldest = staff_client.get("/library/?sort=oldest").content.decode()
    assert oldest.index("Anna lives in Porto.") < oldest.index("green tea")
    tour = staff_client.get("/library/?sort=tour").content.decode()
    assert "green tea" in tour


def test_library_paginates_fifty_a_page(staff_client, space):
    MemoryItem.objects.bulk_create(
        [MemoryItem(space=space, text=f"Bulk memory {i:03d}.") for i in range(120)]
    )
    first = staff_client.get("/library/")
    assert len(first.context["paged"].object_list) == 50
    third = staff_client.get("/library/?page=3")
    assert len(third.context["paged"].object_list) == 20


def test_edit_goes_through_correct_keeping_valid_time_and_history(staff_client, memory):
    from datetime import UTC, datetime

    tea = memory["tea"]
    began = datetime(2024, 1, 1, tzinfo=UTC)
    MemoryItem.objects.filter(pk=tea.pk).update(valid_from=began)
    response = staff_client.post(
        f"/facts/{tea.pk}/edit/",
        {"text": "The user prefers oolong tea.", "next": "/library/?q=tea"},
    )
    assert response.status_code == 302 and response["Location"] == "/library/?q=tea"
    tea.refresh_from_db()
    new = tea.superseded_by
    assert new is not None and new.text == "The user prefers oolong tea."
    assert new.valid_from == began and new.metadata.get("corrects") == tea.pk
    assert AuditEvent.objects.filter(action="update", target_id=str(new.pk)).exists()


def test_edit_of_a_forgotten_memory_is_refused_with_a_message(staff_client, memory):
    tea = memory["tea"]
    MemoryItem.objects.filter(pk=tea.pk).update(status="forgotten")
    response = staff_client.post(f"/facts/{tea.pk}/edit/", {"text": "New text."}, follow=True)
    assert "Not saved" in _messages(response)
    assert not MemoryItem.objects.filter(text="New text.").exists()


def test_batch_forget_and_restore_report_how_many(staff_client, memory, space):
    ids = [memory["tea"].pk, memory["new"].pk]
    response = staff_client.post("/library/batch/", {"do": "forget", "item": ids}, follow=True)
    assert "Forgot 2 memories." in _messages(response)
    assert set(MemoryItem.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
        "forgotten"
    }
    assert AuditEvent.objects.filter(space=space, action="forget").count() == 2
    response = staff_client.post("/library/batch/", {"do": "restore", "item": ids}, follow=True)
    assert "Restored 2 memories." in _messages(response)
    assert set(MemoryItem.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"active"}


def test_batch_refuses_an_empty_selection_and_another_spaces_ids(staff_client, memory):
    empty = staff_client.post("/library/batch/", {"do": "forget"}, follow=True)
    assert "Tick at least one" in _messages(empty)
    other = Space.objects.create(name="other")
    theirs = save_fact(space=other, text="Bob likes chess.").item
    assert theirs is not None
    staff_client.get("/library/?space=test-space")
    response = staff_client.post(
        "/library/batch/", {"do": "forget", "item": [theirs.pk]}, follow=True
    )
    assert "Forgot 0 memories." in _messages(response)
    theirs.refresh_from_db()
    assert theirs.status == "active"
    bad = staff_client.post("/library/batch/", {"do": "explode", "item": [theirs.pk]}, follow=True)
    assert "Choose forget or restore" in _messages(bad)


def test_forget_by_query_previews_then_forgets(staff_client, memory, space):
    preview = staff_client.get("/library/?forget_q=green+tea")
    assert preview.context["preview"] == 1
    assert "1 memory contains" in preview.content.decode()
    response = staff_client.post("/library/forget-query/", {"query": "green tea"}, follow=True)
    assert "Forgot 1 memory." in _messages(response)
    memory["tea"].refresh_from_db()
    assert memory["tea"].status == "forgotten"
    empty = staff_client.post("/library/forget-query/", {"query": "  "}, follow=True)
    assert "Type the words" in _messages(empty)


def test_wipe_needs_the_space_name_typed_exactly(staff_client, memory, space):
    wrong = staff_client.post("/library/wipe/", {"confirm": "Test-Space"}, follow=True)
    assert "Not wiped" in _messages(wrong)
    assert MemoryItem.objects.filter(space=space).count() == 3
    right = staff_client.post("/library/wipe/", {"confirm": space.name}, follow=True)
    assert "Wiped the space" in _messages(right)
    assert MemoryItem.objects.filter(space=space).count() == 0


def test_library_reads_a_few_hundred_rows_in_few_queries(
    staff_client, space, django_assert_max_num_queries
):
    from memory.services.palace import slots

    MemoryItem.objects.bulk_create(
        [
            MemoryItem(space=space, text=f"Memory number {i} about [REDACTED:email].")
            for i in range(300)
        ]
    )
    AuditEvent.objects.bulk_create(
        [
            AuditEvent(space=space, action="add", target_type="item", target_id=str(i))
            for i in range(300)
        ]
    )
    slots.ensure(space)
    staff_client.get("/")  # the session's space, the core blocks made
    # Constant costs: the page frame's status ribbon is a dozen counts, Today
    # two dozen grouped reads; nothing grows with the rows shown.
    for url, most in (
        ("/library/", 25),
        ("/library/?sort=tour&redacted=1", 25),
        ("/", 45),
        ("/log/", 20),
    ):
        with django_assert_max_num_queries(most):
            assert staff_client.get(url).status_code == 200


# --- Log ----------------------------------------------------------------------------


def test_log_tells_events_as_sentences_and_filters_by_class(staff_client, memory, space):
    staff_client.post(f"/facts/{memory['tea'].pk}/forget/")
    body = staff_client.get("/log/").content.decode()
    assert f"Forgot memory {memory['tea'].pk} (restorable)" in body
    assert "{&#x27;" not in body and "{'" not in body  # never a raw dict
    forgetting = staff_client.get("/log/?class=forgetting").context["rows"]
    assert forgetting and all(r["cls"] == "forgetting" for r in forgetting)
    writes = staff_client.get("/log/?class=writes").context["rows"]
    assert all(r["event"].action != "forget" for r in writes)


def test_log_filters_by_actor_and_date_and_pages_by_fifty(staff_client, space):
    for i in range(60):
        audit.record(space=space, action="add", target_type="item", target_id=i, actor="pipeline")
    audit.record(
        space=space,
        action="edit",
        target_type="core",
        target_id="user",
        actor="curator:x",
        version=2,
        reason="hi",
    )
    page1 = staff_client.get("/log/").context
    assert len(page1["rows"]) == 50 and page1["paged"].paginator.num_pages == 2
    mine = staff_client.get("/log/?actor=curator").context["rows"]
    assert [r["text"][0] for r in mine] == ["Saved the user core block as version 2 (hi)"]
    assert staff_client.get("/log/?from=2000-01-01&to=2000-01-02").context["rows"] == []


@pytest.mark.parametrize("query", ["class=nonsense", "from=yesterday", "to=31/12/2024", "page=x"])
def test_log_bad_filters_get_a_message_not_a_500(staff_client, space, query):
    response = staff_client.get(f"/log/?{query}")
    assert response.status_code == 200
    if not query.startswith("page"):
        assert _messages(response)


def test_unknown_actions_fall_back_to_key_value_pairs(space):
    from memory.dashboard.log_sentences import sentence

    event = AuditEvent(
        space=space, action="mystery", target_type="x", target_id="1", detail={"a": 1, "b": [2, 3]}
    )
    text, rest = sentence(event)
    assert "mystery" in text and rest == "a: 1; b: 2, 3"


def test_proposed_writes_read_as_sentences(space):
    from memory.dashboard.log_sentences import sentence

    told = {
        action: sentence(
            AuditEvent(space=space, action=action, target_type="proposal", target_id="7")
        )[0]
        for action in ("propose", "proposal_approve", "proposal_reject")
    }
    assert told == {
        "propose": "Proposed a write for a person to approve (proposal 7)",
        "proposal_approve": "Approved and applied proposal 7",
        "proposal_reject": "Rejected proposal 7; nothing was written",
    }
