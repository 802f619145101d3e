"""eval_locomo --depth: where each evidence turn ranked among the results
asked for, and the table of rank bands per category."""

from __future__ import annotations

import json

import pytest

from memory.evaluation import locomo
from memory.services.relevance import content_words
from tests.recall.test_locomo_over_http import FIXTURE, _as_locomo


def _row(
    category: int, ranks: dict[str, int | None], shares: dict[str, bool] | None = None
) -> dict[str, object]:
    return {"conv": 1, "category": category, "ranks": ranks, "shares": shares or {}}


def _shares(lines: list[str], name: str) -> list[float]:
    line = next(line for line in lines if line.startswith(name))
    return [float(x) for x in line[26:].split()]


def test_the_table_counts_evidence_turns_by_band_and_those_not_found() -> None:
    rows = [
        _row(1, {"D1:1": 3, "D2:4": 15, "D3:1": None}),
        _row(1, {"D4:2": 70}),
        _row(4, {"D1:2": 1}),
        _row(5, {"D9:9": None}),  # adversarial: its own line, not in the overall
    ]
    lines = locomo.depth_table(rows, k=100)
    assert lines[0].split()[3:] == [
        "1-10", "11-20", "21-40", "41-100", "not", "in", "100", "no", "word", "n"
    ]  # fmt: skip
    # Multi-hop: four evidence turns, one in each of 1-10, 11-20, 41-100 and one not found.
    assert _shares(lines, "cat 1 multi-hop") == [0.25, 0.25, 0.0, 0.25, 0.25, 0.0, 4]
    assert _shares(lines, "cat 4 single-hop") == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1]
    assert _shares(lines, "cat 5 adversarial") == [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1]
    assert _shares(lines, "overall 1-4") == [0.4, 0.2, 0.0, 0.2, 0.2, 0.0, 5]


def test_the_last_column_counts_what_was_not_found_and_holds_no_word_of_the_question() -> None:
    rows = [
        _row(3, {"D1:1": None, "D1:2": None, "D1:3": 4}, {"D1:1": False, "D1:2": True}),
        _row(3, {"D2:1": None, "D2:2": 50}, {"D2:1": False, "D2:2": False}),
    ]
    lines = locomo.depth_table(rows, k=100)
    # Five evidence turns: three not found, two of those sharing no word; a
    # turn found at 50 that shares none is not counted (keyword search found it).
    assert _shares(lines, "cat 3 open-domain") == [0.2, 0.0, 0.0, 0.2, 0.6, 0.4, 5]


def test_bands_stop_at_the_depth_asked_for() -> None:
    lines = locomo.depth_table([_row(2, {"D1:1": 12, "D1:2": None})], k=20)
    assert "21-40" not in lines[0] and "not in 20" in lines[0]
    assert _shares(lines, "cat 2 temporal") == [0.0, 0.5, 0.5, 0.0, 2]


@pytest.mark.django_db(transaction=True)  # recall's helpers read with connections of their own
def test_ask_records_each_evidence_turns_rank_as_its_figures_count_it() -> None:
    conv = _as_locomo(json.loads(FIXTURE.read_text()))
    rows = locomo.ask(1, conv, locomo.ingest(1, conv), k=5)
    assert rows
    for r in rows:
        assert set(r["ranks"]) == set(r["evidence"]) == set(r["shares"])
        found = [rank for rank in r["ranks"].values() if rank is not None]
        assert all(1 <= rank <= 5 for rank in found)
        # The same turns the Recall@5 figure counts, at the places they were found.
        assert len(found) / len(r["evidence"]) == r["r@5"]
        for ref, rank in r["ranks"].items():
            if rank is not None and rank <= len(r["found"]):
                assert r["found"][rank - 1] == ref


def test_words_are_matched_as_recall_matches_them() -> None:
    # Stemmed, so "painting" meets "painted"; stop words never count.
    assert content_words("What is she painting?") == {"paint"}
    assert content_words("She painted the lake") >= {"paint", "lake"}
    assert not content_words("what is the")
