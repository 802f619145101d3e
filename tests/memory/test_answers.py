"""answers.py: which questions ask for a name, and which texts name something."""

from __future__ import annotations

import pytest

from memory.services.recall.answers import asks_for_name, names_something


@pytest.mark.parametrize(
    "question",
    [
        "Which city did Ana visit?",
        "What film did Tom see on 3 March?",
        "Which new games did Lea start playing?",
        "What kind of books does she read?",
        "Where did they go camping?",
    ],
)
def test_questions_asking_for_a_name(question: str) -> None:
    assert asks_for_name(question)


@pytest.mark.parametrize(
    "question",
    ["What did Ana eat?", "How does Sam feel about moving?", "When did they meet?"],
)
def test_questions_not_asking_for_a_name(question: str) -> None:
    assert not asks_for_name(question)


def test_a_capitalised_word_inside_a_sentence_or_a_quoted_title_is_a_name() -> None:
    known = {"which", "city", "did", "ana", "visit", "ben"}
    assert names_something("Took a short trip last week to Lisbon.", known=known)
    assert names_something('we saw "the third man" last night', known=known)
    assert names_something("I watched “Vertigo” twice", known=known)


def test_sentence_starts_i_and_known_words_are_not_names() -> None:
    known = {"which", "city", "did", "ana", "visit", "ben"}
    assert not names_something("Visiting is fun. Cities are loud.", known=known)
    assert not names_something("so I'm thinking of it", known=known)
    # The question's own words and the speakers' names.
    assert not names_something("thanks, Ben, the city Ana likes", known=known)
