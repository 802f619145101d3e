"""The knowledge views of the dashboard: the graph's time travel and its
nodes, episodes, the entity lexicon and beliefs; filters, bad input, and a
bounded number of queries at a few hundred rows (the page frame itself:
session, user and status ribbon, costs about a dozen; a query per row would
cost hundreds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.models import Belief, Entity, EntityAlias, MemoryItem, Session, Space, Turn, TurnFact
from memory.selectors import names_an_entity
from memory.services.facts import save_fact

pytestmark = pytest.mark.django_db

KNOWLEDGE = ["/episodes/", "/entities/", "/beliefs/", "/graph/"]


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def moved(space: Space) -> dict[str, MemoryItem]:
    """Anna lived in Porto from 2020, then in Lisbon from 2023."""
    porto = save_fact(
        space=space,
        text="Anna lives in Porto.",
        subject="Anna",
        predicate="lives_in",
        object="Porto",
        valid_from=day("2020-01-01"),
    ).item
    lisbon = save_fact(
        space=space,
        text="Anna lives in Lisbon.",
        subject="Anna",
        predicate="lives_in",
        object="Lisbon",
        valid_from=day("2023-01-01"),
    ).item
    assert porto and lisbon
    porto.refresh_from_db()
    assert porto.superseded_by_id == lisbon.pk
    return {"porto": porto, "lisbon": lisbon}


def edges(data: dict) -> set[tuple[str, str, str, bool]]:  # type: ignore[type-arg]
    names = {n["id"]: n["name"] for n in data["nodes"]}
    return {(names[e["src"]], e["rel"], names[e["dst"]], e["live"]) for e in data["edges"]}


@pytest.mark.parametrize("url", KNOWLEDGE)
def test_it_sends_anonymous_visitors_to_the_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


# --- graph ----------------------------------------------------------------------------


def test_time_travel_shows_the_graph_as_it_stood(staff_client, moved):
    before = staff_client.get("/graph.json?as_of=2022-06-01").json()
    assert ("Anna", "lives_in", "Porto", True) in edges(before)
    assert "Lisbon" not in {n["name"] for n in before["nodes"]}  # not true yet
    after = staff_client.get("/graph.json?as_of=2024-01-01").json()
    assert ("Anna", "lives_in", "Lisbon", True) in edges(after)
    # Superseded since: drawn, but expired (dashed), never live.
    assert ("Anna", "lives_in", "Porto", False) in edges(after)
    assert ("Anna", "lives_in", "Porto", True) not in edges(after)
    now = staff_client.get("/graph.json").json()
    assert ("Anna", "lives_in", "Porto", False) in edges(now)


def test_as_known_then_leaves_out_what_engram_did_not_know_yet(staff_client, moved):
    # Both facts were recorded today: on 2022-06-01 Engram knew neither.
    data = staff_client.get("/graph.json?as_of=2022-06-01&known_at=2022-06-01").json()
    assert data["edges"] == []


def test_the_graph_page_opens_at_the_instant_of_its_url(staff_client, moved):
    body = staff_client.get("/graph/?as_of=2021-03-04").content.decode()
    assert 'data-initial="2021-03-04"' in body
    assert 'data-first="2020-01-01"' in body  # the slider starts at the first validity


def test_a_bad_date_is_a_message_not_an_error(staff_client, moved):
    page = staff_client.get("/graph/?as_of=yesterday-ish")
    assert page.status_code == 200 and "is not a date" in page.content.decode()
    data = staff_client.get("/graph.json?as_of=nope")
    assert data.status_code == 400 and "as_of" in data.json()["error"]


def test_a_sentence_object_is_a_detail_not_a_node(staff_client, space, moved):
    rule = "always answer in English and cite the source of every claim"
    save_fact(
        space=space,
        text=f"Standing instruction: {rule}",
        subject="user",
        predicate="instruction",
        object=rule,
        kind="instruction",
    )
    save_fact(
        space=space,
        text="Anna said the deploy waits. The tests must pass first.",
        subject="Anna",
        predicate="said",
        object="the deploy waits. The tests must pass first",
    )
    # The pipeline does make entities of these sentences...
    assert Entity.objects.filter(space=space, name=rule).exists()
    data = staff_client.get("/graph.json").json()
    names = {n["name"] for n in data["nodes"]}
    # ...the graph does not draw them.
    assert rule not in names and not any("deploy" in n for n in names)
    assert {"Anna", "Porto", "Lisbon"} <= names
    details = {n["name"]: n["details"] for n in data["nodes"]}
    assert any(rule in d for d in details["user"])


@pytest.mark.parametrize(
    "name, entity",
    [
        ("Anna", True),
        ("Anna K.", True),
        ("green tea", True),
        ("Porto, Portugal", True),
        ("St. Petersburg", True),
        ("always answer in English and cite sources", False),
        ("the deploy waits. Tests first", False),
        ("do it now!", False),
    ],
)
def test_names_an_entity(name, entity):
    assert names_an_entity(name) is entity


def test_the_graph_is_a_bounded_number_of_queries(
    staff_client, space, django_assert_max_num_queries
):
    for i in range(150):
        save_fact(
            space=space,
            text=f"Person{i} works at Org{i % 7}.",
            subject=f"Person{i}",
            predicate="works_at",
            object=f"Org{i % 7}",
        )
    with django_assert_max_num_queries(25):
        data = staff_client.get("/graph.json?as_of=2030-01-01&known_at=2030-01-01").json()
    assert len(data["edges"]) == 150
    with django_assert_max_num_queries(25):
        assert staff_client.get("/graph/").status_code == 200


# --- episodes -------------------------------------------------------------------------


@pytest.fixture
def episodes(space: Space) -> list[Session]:
    start = day("2025-05-01")
    sessions = []
    for s in range(3):
        session = Session.objects.create(
            space=space,
            external_id=f"chat-{s}",
            title=f"Chat number {s}",
            started_at=start + timedelta(days=s),
            last_turn_at=start + timedelta(days=s, minutes=30),
        )
        for t in range(30):
            Turn.objects.create(
                space=space,
                session=session,
                role="user" if t % 2 == 0 else "assistant",
                text=f"turn {t} of chat {s}",
                ts=start + timedelta(days=s, minutes=t),
            )
        sessions.append(session)
    from memory.models import SessionSummary

    SessionSummary.objects.create(
        space=space, session=sessions[0], text="They talked about Porto.", turn_count=30
    )
    return sessions


def test_episodes_are_listed_newest_first_with_summaries(staff_client, episodes):
    body = staff_client.get("/episodes/").content.decode()
    assert body.index("Chat number 2") < body.index("Chat number 1") < body.index("Chat number 0")
    assert "They talked about Porto." in body and "30 turns" in body
    only = staff_client.get("/episodes/?q=porto").content.decode()
    assert "Chat number 0" in only and "Chat number 2" not in only


def test_an_episode_shows_its_turns_and_the_turns_around_one(staff_client, episodes):
    session = episodes[1]
    body = staff_client.get(f"/episodes/{session.pk}/").content.decode()
    assert "turn 0 of chat 1" in body and "turn 29 of chat 1" in body
    anchor = Turn.objects.get(session=session, text="turn 10 of chat 1")
    around = staff_client.get(f"/episodes/{session.pk}/?around={anchor.pk}&span=3").content.decode()
    assert "turn 7 of chat 1" in around and "turn 13 of chat 1" in around
    assert "turn 6 of chat 1" not in around and "turn 14 of chat 1" not in around
    assert 'id="around-earlier"' in around and 'id="around-later"' in around


def test_a_bad_anchor_or_page_is_a_message_not_an_error(staff_client, episodes):
    session = episodes[0]
    other = Turn.objects.filter(session=episodes[1]).first()
    for query in ("around=abc", f"around={other.pk}", "around=999999", "span=-4&around=x"):
        response = staff_client.get(f"/episodes/{session.pk}/?{query}")
        assert response.status_code == 200
        assert "no such turn" in response.content.decode()
    assert staff_client.get("/episodes/?page=zzz").status_code == 200
    assert staff_client.get("/episodes/999999/").status_code == 404


def test_episodes_are_a_bounded_number_of_queries(
    staff_client, space, django_assert_max_num_queries
):
    now = day("2025-01-01")
    sessions = Session.objects.bulk_create(
        Session(space=space, external_id=f"s{i}", last_turn_at=now + timedelta(minutes=i))
        for i in range(300)
    )
    Turn.objects.bulk_create(
        Turn(space=space, session=s, role="user", text="hi", ts=now) for s in sessions
    )
    with django_assert_max_num_queries(25):
        response = staff_client.get("/episodes/")
    assert response.status_code == 200 and "300 episodes" in response.content.decode()
    with django_assert_max_num_queries(25):
        assert staff_client.get(f"/episodes/{sessions[0].pk}/").status_code == 200


# --- entities -------------------------------------------------------------------------


def test_the_lexicon_filters_by_kind_and_finds_aliases(staff_client, space, moved):
    anna = Entity.objects.get(space=space, name="Anna")
    EntityAlias.objects.create(space=space, entity=anna, alias="Annie", norm="annie")
    places = staff_client.get("/entities/?kind=place").content.decode()
    assert "Lisbon" in places and ">Anna<" not in places
    by_alias = staff_client.get("/entities/?q=annie").content.decode()
    assert ">Anna<" in by_alias and "Annie" in by_alias and "Lisbon" not in by_alias
    assert "Lisbon" not in staff_client.get("/entities/?q=%3F%21").content.decode()
    bad = staff_client.get("/entities/?kind=spaceship")
    assert bad.status_code == 200 and "Unknown kind" in bad.content.decode()


def test_an_entity_shows_its_fact_chain_with_superseded_facts(staff_client, space, moved):
    anna = Entity.objects.get(space=space, name="Anna")
    body = staff_client.get(f"/entities/{anna.pk}/").content.decode()
    assert body.index("Anna lives in Lisbon.") < body.index("Anna lives in Porto.")
    assert "superseded by" in body
    assert "?entity=Anna" in body  # to the library (or the facts page)
    assert staff_client.get("/entities/999999/").status_code == 404


def test_entities_are_a_bounded_number_of_queries(
    staff_client, space, django_assert_max_num_queries
):
    for i in range(100):
        save_fact(
            space=space,
            text=f"Person{i} works at Org{i % 7}.",
            subject=f"Person{i}",
            predicate="works_at",
            object=f"Org{i % 7}",
        )
    with django_assert_max_num_queries(25):
        response = staff_client.get("/entities/")
    assert response.status_code == 200
    org = Entity.objects.get(space=space, name="Org0")
    with django_assert_max_num_queries(25):
        body = staff_client.get(f"/entities/{org.pk}/").content.decode()
    assert "Person0 works at Org0." in body


# --- beliefs --------------------------------------------------------------------------


@pytest.fixture
def beliefs(space: Space, moved: dict[str, MemoryItem]) -> dict[str, Belief]:
    tea = save_fact(
        space=space, text="Anna drinks tea.", subject="Anna", predicate="drinks", object="tea"
    ).item
    held = Belief.objects.create(space=space, text="Anna is a Portugal person.", proof_count=2)
    held.evidence.set([moved["lisbon"], tea])
    stale = Belief.objects.create(
        space=space, text="Anna settled in Porto.", status="stale", proof_count=1
    )
    stale.evidence.set([moved["porto"]])
    refuted = Belief.objects.create(space=space, text="Anna hates tea.", status="refuted")
    session = Session.objects.create(space=space, external_id="tea-talk")
    turn = Turn.objects.create(space=space, session=session, role="user", text="Anna loves her tea")
    TurnFact.objects.create(space=space, turn=turn, item=tea)
    return {"held": held, "stale": stale, "refuted": refuted}


def test_beliefs_are_ranked_by_evidence_with_their_chain(staff_client, beliefs):
    body = staff_client.get("/beliefs/").content.decode()
    assert body.index("Anna is a Portugal person.") < body.index("Anna settled in Porto.")
    assert body.index("Anna settled in Porto.") < body.index("Anna hates tea.")
    assert "Anna drinks tea." in body and "Anna loves her tea" in body and "?around=" in body
    assert "superseded" in body  # the stale belief's evidence was superseded


@pytest.mark.parametrize(
    "status, shown, hidden",
    [
        ("held", "Portugal person", "settled in Porto"),
        ("stale", "settled in Porto", "Portugal person"),
        ("refuted", "hates tea", "Portugal person"),
    ],
)
def test_beliefs_filter_by_status(staff_client, beliefs, status, shown, hidden):
    body = staff_client.get(f"/beliefs/?status={status}").content.decode()
    assert shown in body and hidden not in body


def test_a_bad_belief_filter_is_a_message(staff_client, beliefs):
    response = staff_client.get("/beliefs/?status=maybe&page=-1")
    assert response.status_code == 200 and "Unknown filter" in response.content.decode()


def test_beliefs_are_a_bounded_number_of_queries(
    staff_client, space, moved, django_assert_max_num_queries
):
    for i in range(300):
        b = Belief.objects.create(space=space, text=f"belief {i}", proof_count=i % 5)
        b.evidence.set([moved["porto"], moved["lisbon"]])
    with django_assert_max_num_queries(25):
        response = staff_client.get("/beliefs/")
    assert response.status_code == 200 and "300 beliefs" in response.content.decode()
