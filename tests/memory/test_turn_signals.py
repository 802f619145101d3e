"""The turn channel's neighbour context and lifts, over arrays
(memory/services/recall/turn_signals.py)."""

from __future__ import annotations

import numpy as np

from memory.services.recall.turn_signals import TurnTable, rank


def _norm(name: str) -> str:
    return name.lower().strip()


def _rank(table: TurnTable, base: dict[int, float], **kw) -> dict[int, float]:
    at, held = table.find(list(base))
    scores = np.zeros(len(table))
    scores[at[held]] = np.array(list(base.values()))[held]
    options = {
        "span": 2,
        "share": 0.8,
        "norm": _norm,
        "named": set(),
        "speaker_boost": 1.0,
        "when_boost": None,
        "naming": None,
        "name_boost": 1.0,
        "limit": 10,
    }
    return dict(rank(table, scores, **{**options, **kw}))


def test_a_table_is_ascending_by_id_whatever_order_it_is_given() -> None:
    table = TurnTable.of([(5, 1, "Ana", False), (3, 1, "", True), (4, 2, "Ana", False)])
    assert table.ids.tolist() == [3, 4, 5]
    assert [table.names[p] for p in table.speakers.tolist()] == ["", "Ana", "Ana"]
    assert table.timed.tolist() == [True, False, False]
    at, held = table.find([4, 9])
    assert held.tolist() == [True, False] and at[0] == 1


def test_a_neighbour_lends_a_share_over_the_distance_within_its_session() -> None:
    # 10-11 adjacent in session 1; 12 is in another session and lends nothing.
    table = TurnTable.of([(10, 1, "", False), (11, 1, "", False), (12, 2, "", False)])
    scores = _rank(table, {10: 1.0, 12: 5.0})
    assert scores == {12: 5.0, 10: 1.0, 11: 0.8}


def test_past_the_adjacent_turn_only_the_same_speaker_lends() -> None:
    table = TurnTable.of(
        [(1, 1, "Ana", False), (2, 1, "Bo", False), (3, 1, "ANA ", False), (4, 1, "", False)]
    )
    scores = _rank(table, {1: 1.0})
    # 3 is Ana again two turns on (names compared normalised): half the
    # share; 4 is too far; 2 is adjacent, whoever speaks.
    assert scores == {1: 1.0, 2: 0.8, 3: 0.4}
    # A turn with no recorded speaker never counts as the same speaker.
    table = TurnTable.of([(1, 1, "", False), (2, 1, "", False), (3, 1, "", False)])
    assert _rank(table, {1: 1.0}) == {1: 1.0, 2: 0.8}


def test_lifts_apply_in_turn_and_the_order_breaks_ties_by_id() -> None:
    table = TurnTable.of([(1, 1, "Ana Lima", True), (5, 2, "Bo", False), (9, 3, "Bo", True)])
    named = _rank(table, {1: 1.0, 5: 1.0, 9: 1.0}, named={"ana"})
    assert list(named.items()) == [(1, 2.0), (5, 1.0), (9, 1.0)]
    timed = _rank(table, {1: 1.0, 5: 1.0, 9: 1.0}, named={"ana"}, when_boost=0.5)
    assert list(timed.items()) == [(1, 3.0), (9, 1.5), (5, 1.0)]
    naming = np.array([False, True, False])
    assert list(_rank(table, {1: 1.0, 5: 1.0}, naming=naming).items()) == [(5, 2.0), (1, 1.0)]
    assert list(_rank(table, {1: 1.0, 5: 1.0, 9: 1.0}, limit=2)) == [1, 5]


def test_nothing_scores_in_an_empty_table() -> None:
    assert (
        rank(
            TurnTable.of([]),
            np.zeros(0),
            span=2,
            share=0.8,
            norm=_norm,
            named=set(),
            speaker_boost=1.0,
            when_boost=None,
            naming=None,
            name_boost=1.0,
            limit=5,
        )
        == []
    )
