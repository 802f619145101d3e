"""The deterministic resolution rules on constructed neighbours."""

from __future__ import annotations

from memory.models import MemoryItem
from memory.services.pipeline.candidates import Candidate
from memory.services.pipeline.resolve import decide


def _stored(text: str, **fields: str) -> MemoryItem:
    return MemoryItem(pk=1, text=text, content_hash="", **fields)


def test_equal_objects_repeat_a_fact() -> None:
    old = _stored("Sam lives in Oslo.", subject="Sam", predicate="lives_in", object="Oslo")
    new = Candidate(
        "Sam has lived in Oslo for years.", subject="Sam", predicate="lives_in", object="Oslo"
    )
    assert decide(new, [old]).action == "NOOP"


def test_empty_objects_prove_nothing_the_text_decides() -> None:
    # Both values are only in the text: "same subject, predicate and object"
    # would drop the move to Bergen as a repeat.
    old = _stored("Sam lives in Oslo.", subject="Sam", predicate="lives_in")
    new = Candidate("Sam lives in Bergen now.", subject="Sam", predicate="lives_in")
    decision = decide(new, [old])
    assert decision.action != "NOOP", decision
    same = Candidate("Sam lives in Oslo.", subject="Sam", predicate="lives_in")
    assert decide(same, [old]).action == "NOOP"  # a real repeat still is one
