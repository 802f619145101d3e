"""The full-text facade on SQLite FTS5 and PostgreSQL: ranks, filters, and
never raises on whatever a user types."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import MemoryItem, Session, SessionSummary, Space, Turn
from memory.search import query_terms, search

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(space):  # type: ignore[no-untyped-def]
    s = Session.objects.create(space=space, external_id="s")
    Turn.objects.create(
        space=space, session=s, ref="1", role="user", text="Running shoes for marathons"
    )
    Turn.objects.create(
        space=space, session=s, ref="2", role="user", text="I ran a marathon in Berlin"
    )
    Turn.objects.create(
        space=space,
        session=s,
        ref="3",
        role="user",
        text="cooking pasta tonight",
        screen_status="flagged",
    )
    MemoryItem.objects.create(space=space, text="Ran the Berlin marathon in 2019")
    MemoryItem.objects.create(
        space=space, text="Old marathon fact", expired_at=datetime(2024, 1, 1, tzinfo=UTC)
    )
    SessionSummary.objects.create(space=space, session=s, text="Talked about marathons and shoes")
    return s


def test_stemming_matches_word_forms(corpus, space) -> None:
    hits = search("turn", space_id=space.pk, query="marathon running")
    assert len(hits) == 2
    assert all(h.score > 0 for h in hits)


def test_items_are_live_only_by_default(corpus, space) -> None:
    texts = [
        MemoryItem.objects.get(pk=h.id).text
        for h in search("item", space_id=space.pk, query="marathon")
    ]
    assert texts == ["Ran the Berlin marathon in 2019"]


def test_quarantined_turns_are_not_found(corpus, space) -> None:
    assert search("turn", space_id=space.pk, query="pasta") == []


def test_other_spaces_are_not_searched(corpus) -> None:
    other = Space.objects.create(name="other")
    assert search("turn", space_id=other.pk, query="marathon") == []
    assert search("summary", space_id=other.pk, query="marathon") == []


def test_stopwords_are_dropped_unless_nothing_else_is_left() -> None:
    assert query_terms("what is the marathon") == ["marathon"]
    assert query_terms("who am I") == ["who", "am", "i"]
    assert query_terms("") == []
    assert query_terms('"") OR * NEAR(') == ["near"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=300))
def test_any_query_string_is_safe(corpus, space, query) -> None:
    for target in ("item", "turn", "summary"):
        hits = search(target, space_id=space.pk, query=query, limit=5)
        assert len(hits) <= 5


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "'",
        "\\",
        "a\"b'c",
        "NEAR/2",
        "^marathon",
        "marathon*",
        "-marathon",
        "text:marathon",
        "🏃‍♀️ marathon",
        "マラソン",
        "\x00marathon",
        "marathon" * 500,
    ],
)
def test_operator_characters_are_plain_text(corpus, space, query) -> None:
    search("turn", space_id=space.pk, query=query)  # must not raise
    if "marathon" in query.lower() and len(query) < 100:
        assert search("turn", space_id=space.pk, query=query)


def test_ranking_is_capped_to_the_newest_matches(space, monkeypatch) -> None:
    # A term in every row: only the newest SCAN_CAP matches are ranked, and
    # below the cap the ranking is the full one.
    import memory.search as facade

    s = Session.objects.create(space=space, external_id="cap")
    ids = [
        Turn.objects.create(
            space=space, session=s, ref=str(i), role="user", text="kayak " * (1 + i % 3)
        ).pk
        for i in range(8)
    ]
    full = search("turn", space_id=space.pk, query="kayak", limit=20)
    assert sorted(h.id for h in full) == sorted(ids)
    monkeypatch.setattr(facade, "SCAN_CAP", 3)
    capped = search("turn", space_id=space.pk, query="kayak", limit=20)
    assert sorted(h.id for h in capped) == sorted(ids)[-3:]
    assert [h.id for h in capped] == [h.id for h in full if h.id in set(ids[-3:])]


def test_index_follows_orm_writes(space) -> None:
    # Inserts, updates through save() and .only()-loaded rows, and deletes all
    # reach the full-text index (FTS5 triggers; PostgreSQL's generated column).
    item = MemoryItem.objects.create(space=space, text="Likes oolong tea")
    assert [h.id for h in search("item", space_id=space.pk, query="oolong")] == [item.pk]
    partial = MemoryItem.objects.only("id", "text").get(pk=item.pk)
    partial.text = "Likes sencha tea"
    partial.save(update_fields=["text"])
    assert search("item", space_id=space.pk, query="oolong") == []
    assert [h.id for h in search("item", space_id=space.pk, query="sencha")] == [item.pk]
    assert MemoryItem.objects.values("text").get(pk=item.pk) == {"text": "Likes sencha tea"}
    MemoryItem.objects.filter(pk=item.pk).delete()
    assert search("item", space_id=space.pk, query="sencha") == []


def test_postgres_ranks_a_stored_tsvector_column() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the stored tsvector column exists on PostgreSQL only")
    from memory.search import _pg

    with connection.cursor() as cursor:
        for table in _pg.TABLES.values():
            cursor.execute(
                "SELECT is_generated FROM information_schema.columns "
                "WHERE table_name = %s AND column_name = %s",
                [table, _pg.COLUMN],
            )
            assert cursor.fetchone() == ("ALWAYS",)
            cursor.execute(
                "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexdef ILIKE %s",
                [table, "%gin%"],
            )
            defs = [row[0] for row in cursor.fetchall() if _pg.COLUMN in row[0]]
            # No pending list for searches to scan (see _pg.create_column_sql).
            assert defs and all("fastupdate=off" in d for d in defs)


def test_pruning_counts_words_in_the_searched_space_only(space, monkeypatch) -> None:
    # "kayak" is everywhere in a big neighbouring space but rare here: it must
    # not be pruned from this space's query because of the neighbour's data.
    import memory.search as facade

    monkeypatch.setattr(facade, "MATCH_BUDGET", 5)
    facade._df_cache.clear()
    other = Space.objects.create(name="busy-neighbour")
    busy = Session.objects.create(space=other, external_id="busy")
    Turn.objects.bulk_create(
        Turn(space=other, session=busy, ref=str(i), role="user", text="kayak trip")
        for i in range(20)
    )
    s = Session.objects.create(space=space, external_id="quiet")
    kayak = Turn.objects.create(space=space, session=s, ref="k", role="user", text="my kayak")
    ferry = Turn.objects.create(space=space, session=s, ref="f", role="user", text="a ferry")
    # More rows than the budget, so this space's terms really are counted.
    Turn.objects.bulk_create(
        Turn(space=space, session=s, ref=f"x{i}", role="user", text="weather talk")
        for i in range(6)
    )
    hits = {h.id for h in search("turn", space_id=space.pk, query="kayak ferry", limit=10)}
    assert hits == {kayak.pk, ferry.pk}


def test_pruning_takes_the_callers_counts_instead_of_asking_the_index(space, monkeypatch) -> None:
    import memory.search as facade

    monkeypatch.setattr(facade, "MATCH_BUDGET", 5)
    facade._df_cache.clear()
    s = Session.objects.create(space=space, external_id="s")
    Turn.objects.create(space=space, session=s, ref="k", role="user", text="my kayak")
    ferry = Turn.objects.create(space=space, session=s, ref="f", role="user", text="a ferry")
    Turn.objects.bulk_create(
        Turn(space=space, session=s, ref=f"x{i}", role="user", text="weather talk")
        for i in range(6)
    )
    asked: list[str] = []

    def counts(term: str) -> int:
        asked.append(term)
        return {"kayak": 50, "ferry": 1}[term]

    hits = search("turn", space_id=space.pk, query="kayak ferry", limit=10, doc_frequency=counts)
    # The caller says "kayak" is common: over the budget it is left out.
    assert [h.id for h in hits] == [ferry.pk]
    assert sorted(asked) == ["ferry", "kayak"]


@pytest.mark.parametrize("target", ["item", "turn"])
def test_sqlite_checks_matches_against_a_covering_index(target) -> None:
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("the covering filter indexes are SQLite's (PostgreSQL needs none)")
    from memory.search import _fts

    # A fresh database has no planner statistics: the plan must not need them.
    sql, params = _fts.search_sql(
        target, space_id=1, terms=["x"], limit=10, live_only=True, when=None, scan_cap=100
    )
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert f"COVERING INDEX {_fts.TABLES[target][1]}_fts_filter" in plan, plan
    assert plan.index("VIRTUAL TABLE") < plan.index("COVERING INDEX"), plan
    # The walk is bounded to the space's id range: FTS5 takes both bounds.
    index = plan.split("VIRTUAL TABLE INDEX ", 1)[1].split()[0]
    assert ">" in index and "<" in index, plan


def test_pruning_says_how_many_rows_the_terms_match(space, monkeypatch) -> None:
    # The backend may choose its plan by it (PostgreSQL: _pg.BITMAP_FACTOR).
    import memory.search as facade

    monkeypatch.setattr(facade, "MATCH_BUDGET", 5)
    facade._df_cache.clear()
    backend = facade._backend()
    known = {"kayak": 3, "ferry": 1, "weather": 40}.__getitem__
    # A space no bigger than the budget is not counted.
    assert facade._prune(backend, "turn", space.pk, ["kayak"], known, 5) == (["kayak"], None)
    s = Session.objects.create(space=space, external_id="s")
    Turn.objects.bulk_create(
        Turn(space=space, session=s, ref=str(i), role="user", text="weather talk") for i in range(8)
    )
    facade._df_cache.clear()
    assert facade._prune(backend, "turn", space.pk, ["kayak", "ferry"], known, 5) == (
        ["kayak", "ferry"],
        4,
    )
    # Over the budget the most common word goes; the count is of what is kept.
    assert facade._prune(backend, "turn", space.pk, ["weather", "ferry"], known, 5) == (
        ["ferry"],
        1,
    )
    # Counts from the index stop past the budget, so a kept word that
    # reaches it leaves the total unknown.
    assert facade._prune(backend, "turn", space.pk, ["weather", "talk"], None, 5) == (
        ["weather"],
        None,
    )


def test_postgres_bitmap_plan_finds_the_same_rows_and_restores_the_planner(space) -> None:
    from django.db import DatabaseError, connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL planner setting")
    from memory.search import _pg

    s = Session.objects.create(space=space, external_id="s")
    Turn.objects.bulk_create(
        Turn(space=space, session=s, ref=str(i), role="user", text=f"kayak trip {i % 5}")
        for i in range(30)
    )

    def show() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW enable_indexscan")
            return str(cursor.fetchone()[0])

    args = dict(space_id=space.pk, terms=["kayak", "3"], limit=50, live_only=True, when=None)
    planned = _pg.search("turn", **args, scan_cap=2000)
    bitmap = _pg.search("turn", **args, scan_cap=2000, matches=30)
    assert bitmap == planned and len(planned) == 30
    assert show() == "on"
    with connection.cursor() as cursor:
        inside = _pg._without_index_walks(cursor, "SELECT current_setting('enable_indexscan')", [])
    assert inside == [("off",)] and show() == "on"
    # A search that fails inside a transaction leaves no setting behind either.
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            _pg._without_index_walks(cursor, "SELECT 1/0", [])
    assert show() == "on"


def test_facts_rank_by_how_rare_the_matched_word_is_in_the_space(space) -> None:
    # One word in a single fact, the other in forty: the fact with the rare
    # word comes first, though it is long and they are short. (PostgreSQL's
    # own cover density knows no rarity and put the short ones first.)
    from memory.services.recall import channels

    MemoryItem.objects.bulk_create(
        MemoryItem(space=space, text=f"Meeting {i} moved") for i in range(40)
    )
    rare = MemoryItem.objects.create(
        space=space, text="Planning a long Zanzibar trip with the whole family next summer"
    )
    ranking = channels.bm25_items(space=space, query="zanzibar meeting", limit=10, when=None)
    assert ranking.keys[0] == ("item", rare.pk)
    assert len(ranking.keys) == 10
