"""One person, one entity: who a fact is about, resolved before it is written.

The user is the entity named "user"; their name, first name and nicknames
are its aliases, so "Maria works at Bosch now" (the user is Maria) is a fact
about the user and supersedes "User works at Siemens". Anyone else resolves
through the graph's aliases ("anna", "Anna K." -> Anna), and a relation
("my sister Anna") makes "my sister" an alias of that person, so "my sister
moved to Porto" is about Anna. A nickname adds an alias; it never replaces
the name."""

from __future__ import annotations

import re

from memory.models import Entity, MemoryItem, Space
from memory.services import graph
from memory.services.pipeline.candidates import Candidate

USER = "user"
# Predicates whose object is another name the user answers to.
NAME_PREDICATES = frozenset({"name", "nickname"})


def user_entity(space: Space) -> Entity:
    return graph.upsert_entity(space=space, name=USER, type=Entity.Type.PERSON)


def _lookup(space: Space, name: str) -> Entity | None:
    return graph.find_entity(space=space, name=name)


def canonical_subject(space: Space, subject: str) -> str:
    """The subject a fact is stored under: "user" for the user under any of
    their names, a known person's display name, else the subject as given."""
    norm = graph.normalize(subject)
    if not norm or norm in graph.USER_NAMES:
        return USER if norm else subject
    entity = _lookup(space, subject)
    if entity is None:
        return subject
    return USER if entity.norm == USER else entity.name


def resolve(space: Space, candidate: Candidate) -> Candidate:
    """Rewrite the candidate's subject (and the subject at the start of its
    text) to the canonical one. Facts about the user read "User ..."."""
    given = candidate.subject
    if not given:
        return candidate
    subject = canonical_subject(space, given)
    if subject == given:
        return candidate
    candidate.subject = subject
    display = "User" if subject == USER else subject
    pattern = re.compile(rf"^(?:my\s+)?{re.escape(given)}(?!\w)", re.I)
    if pattern.match(candidate.text):
        candidate.text = pattern.sub(display, candidate.text, count=1)
    return candidate


def learn(space: Space, item: MemoryItem) -> bool:
    """Aliases a written fact teaches: the user's names, and "my <relation>"
    for the person a relation names. True if it was a naming fact (it needs
    no graph edge of its own)."""
    if item.subject != USER or not item.object:
        return False
    if item.predicate in NAME_PREDICATES:
        names = [item.object]
        first = item.object.split()[0]
        if item.predicate == "name" and len(item.object.split()) > 1:
            names.append(first)
        graph.add_aliases(space=space, entity=user_entity(space), names=names)
        return True
    if item.predicate in graph.RELATIONSHIP_PREDICATES:
        person = graph.upsert_entity(space=space, name=item.object, type=Entity.Type.PERSON)
        graph.add_aliases(
            space=space, entity=person, names=[f"my {item.predicate.replace('_', ' ')}"]
        )
    return False
