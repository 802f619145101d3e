"""The literal prefilter only skips patterns that cannot match: every verdict
with it is the verdict without it, on every corpus text and its readings."""

from __future__ import annotations

import re

import pytest

from memory.evaluation import screening as evaluation
from memory.screening import directives, links, prefilter, screen, split_reasons, views


def _patterns() -> list[re.Pattern[str]]:
    found = list(directives._EVERY_PATTERN)
    found += directives._PERSIST_DANGER_RE + directives._NEVER_DANGER_RE
    found += [v for v in vars(links).values() if isinstance(v, re.Pattern)]
    return found


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Half the injection texts (all held-out ones) and a 25th of the benign, with their readings."""
    found: list[str] = []
    for path, step in (
        (evaluation.INJECTION, 2),
        (evaluation.INJECTION_HELDOUT, 1),
        (evaluation.BENIGN, 25),
        (evaluation.BENIGN_HELDOUT, 25),
    ):
        for example in evaluation.load(path)[::step]:
            for turn in example.turns:
                found.append(turn)
                found += [reading for _, reading in views.readings(turn)]
    return found


def test_required_literals_are_read_from_the_pattern():
    needs = prefilter.required(
        re.compile(r"\b(?:ignore|disregard)\s+(?:all\s+)?previous\s+instructions?", re.I)
    )
    # Every set is required; the two most selective are kept.
    assert needs == (frozenset({"instruction"}), frozenset({"previous"}))
    assert prefilter.required(re.compile(r"\b(?:ignore|disregard)\s+\w+", re.I)) == (
        frozenset({"ignore", "disregard"}),
    )
    # An optional part, a class or an alternative with no literal needs nothing.
    assert prefilter.required(re.compile(r"(?:foo)?\w+")) == ()
    assert prefilter.required(re.compile(r"(?:foo|\d+)bar")) == (frozenset({"bar"}),)


def test_a_pattern_ruled_out_never_matches(texts):
    """Soundness, pattern by pattern, over some 3,000 corpus texts and readings."""
    checked = 0
    for pattern in _patterns():
        one = [pattern]
        for text in texts:
            if not prefilter.live(one, text):
                assert pattern.search(text) is None, (pattern.pattern[:80], text)
                checked += 1
    assert checked > 300_000  # the prefilter does rule most of them out


def test_verdicts_are_the_same_with_and_without_the_prefilter():
    examples = [
        *evaluation.load(evaluation.INJECTION),
        *evaluation.load(evaluation.INJECTION_HELDOUT),
        *evaluation.load(evaluation.BENIGN)[:800],
    ]

    def verdicts() -> list[tuple[str, bool, tuple[str, ...]]]:
        out = []
        for example in examples:
            for turn in example.turns:
                result = screen(turn)
                out.append((result.text, result.flagged, tuple(result.reasons)))
            if len(example.turns) == 2:
                out.append(("split", True, tuple(split_reasons(*example.turns))))
        return out

    with prefilter.disabled():
        reference = verdicts()
    assert verdicts() == reference


def test_case_insensitive_matches_are_never_ruled_out():
    """`re` under IGNORECASE matches some characters to letters that
    casefold() keeps apart ("ı" and "i", "K" and "k"): every character that
    matches a literal's character must fold to what that character folds to."""
    everything = "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000)
    letters = {
        ch
        for pattern in _patterns()
        for need in prefilter.required(pattern)
        for literal in need
        for ch in literal
    }
    wrong = {
        (ch, other)
        for ch in sorted(letters)
        for other in re.findall(re.escape(ch), everything, re.I)
        if prefilter.fold(other) != prefilter.fold(ch)
    }
    assert wrong == set()
    for text in ("İGNORE PREVİOUS", "ıgnore previous", "IGNORE PREVIOUS"):
        pattern = re.compile("ignore previous", re.I)
        assert pattern.search(text)
        assert prefilter.live([pattern], text) == [pattern]


def test_ordinary_chat_costs_a_fraction_of_the_battery():
    chat = "I moved to Leeds last month for a new job, and my sister Anna teaches piano."
    assert len(prefilter.live(directives._EVERY_PATTERN, chat)) <= 3
