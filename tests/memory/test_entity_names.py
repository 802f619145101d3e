"""Entity names: one entity for the same name written differently (case,
punctuation, spacing, an initial), never one for two different names."""

from __future__ import annotations

import pytest

from memory.models import Entity
from memory.services import graph
from memory.services.imports import graph as graph_import

pytestmark = pytest.mark.django_db


def test_names_differing_in_a_one_character_number_stay_apart(space) -> None:  # type: ignore[no-untyped-def]
    a = graph.upsert_entity(space=space, name="Ada 1 Lovelace")
    b = graph.upsert_entity(space=space, name="Ada 4 Lovelace")
    assert a.pk != b.pk
    assert graph.find_entity(space=space, name="Ada 4 Lovelace") == b


def test_different_initials_are_different_people(space) -> None:  # type: ignore[no-untyped-def]
    k = graph.upsert_entity(space=space, name="Ada K. Lovelace")
    j = graph.upsert_entity(space=space, name="Ada J. Lovelace")
    assert k.pk != j.pk
    assert graph.find_entity(space=space, name="Ada J Lovelace") == j


def test_real_merges_still_happen(space) -> None:  # type: ignore[no-untyped-def]
    ada = graph.upsert_entity(space=space, name="Ada Lovelace")
    for same in (
        "ada lovelace",
        "Ada  Lovelace",
        "Ada-Lovelace!",
        "Ada K. Lovelace",
        "ÁDA LOVELACE",
    ):
        assert graph.upsert_entity(space=space, name=same) == ada, same
    anna = graph.upsert_entity(space=space, name="Anna K.")
    assert graph.upsert_entity(space=space, name="Anna") == anna


def test_graph_import_keeps_numbered_names_apart(space) -> None:  # type: ignore[no-untyped-def]
    dump = {
        "nodes": [
            {"id": "a", "name": "Ada 1 Lovelace", "type": "person"},
            {"id": "b", "name": "Ada 4 Lovelace", "type": "person"},
        ],
        "edges": [],
    }
    graph_import.import_graph(space=space, dump=dump)
    assert Entity.objects.filter(space=space).count() == 2
