"""Screening runs on every write, some of them in the web worker, so its cost
must grow with the text's length, never with its square: each of these
20,000-character texts once took from 6 s to minutes (a pattern that
backtracked on a long run of spaces, letters, "a-a-a" or newlines)."""

from __future__ import annotations

import time

import pytest

from memory.screening import screen_strict

LENGTH = 20_000
# Each takes 0.1-0.7 s on this 2-core machine; the bound leaves room for a
# busy CI host while failing any quadratic pattern by far.
LIMIT_SECONDS = 5.0

PATHOLOGICAL = {
    "spaces": " " * LENGTH + "x",
    "newlines": "\n" * LENGTH + "x",
    "one long word": "a" * LENGTH,
    "hyphenated letters": "a-" * (LENGTH // 2),
    "dotted letters": "a." * (LENGTH // 2),
    "spaced letters": "a " * (LENGTH // 2),
    "letters and digits": "a1" * (LENGTH // 2),
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_screening_cost_is_linear(text: str) -> None:
    started = time.perf_counter()
    screen_strict(text)
    assert time.perf_counter() - started < LIMIT_SECONDS
