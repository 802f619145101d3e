"""Who a fact is about, for the steps that gather facts by person or thing
rather than by the subject string they were stored under.

A subject resolves through the entity graph's aliases (memory.services.graph:
"Anna", "anna" and "Anna K." are one entity once the graph knows Anna); the
user is the entity named "user", under any of the names they answer to. A
subject the graph does not know groups by its normalized name without
initials, the graph's own rule, so "Anna K." still lands beside "Anna"."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from memory.models import EntityAlias, Space
from memory.services import graph
from memory.services.identity import USER


@dataclass
class Subject:
    key: str  # stable across runs: the entity's norm, or the bare normalized name
    is_user: bool
    names: set[str] = field(default_factory=set)  # spellings seen or known as aliases
    _spellings: Counter[str] = field(default_factory=Counter)
    entity_name: str = ""

    @property
    def display(self) -> str:
        """How a sentence names it: "the user", the entity's name, or the
        spelling most used for it (a full name before one with initials)."""
        if self.is_user:
            return "the user"
        if self.entity_name:
            return self.entity_name
        if not self._spellings:
            return self.key
        return max(
            self._spellings,
            key=lambda s: (graph.normalize(s) == self.key, self._spellings[s], s[:1].isupper()),
        )

    @property
    def stored_subject(self) -> str:
        return USER if self.is_user else self.display

    def lead(self) -> re.Pattern[str]:
        """A text's opening naming this subject: "User", "The user", "Anna K."."""
        spellings = {n for n in self.names if n}
        if self.is_user:
            spellings |= {"user", "the user"}
        alternatives = "|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True))
        # A name may carry initials the graph dropped ("Anna K." is Anna).
        initials = r"(?:\s+[a-z]\.(?!\w)|\s+[a-z](?![\w'’]))*"
        return re.compile(rf"^\s*(?:the\s+)?(?:{alternatives})(?![\w]){initials}", re.I)


def _bare(norm: str) -> str:
    words = [w for w in norm.split() if len(w) > 1]
    return " ".join(words) or norm


class Resolver:
    """Resolves subject strings of one space, one graph lookup per spelling."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self._by_spelling: dict[str, str | None] = {}
        self.subjects: dict[str, Subject] = {}

    def _key(self, spelling: str) -> tuple[str, bool, int | None, str] | None:
        norm = graph.normalize(spelling)
        if not norm:
            return None
        if norm in graph.USER_NAMES:
            user = graph.find_entity(space=self.space, name=USER)
            return USER, True, user.pk if user is not None else None, ""
        entity = graph.find_entity(space=self.space, name=spelling)
        if entity is not None:
            if entity.norm == USER:
                return USER, True, entity.pk, ""
            return entity.norm, False, entity.pk, entity.name
        return _bare(norm), False, None, ""

    def __call__(self, spelling: str) -> Subject | None:
        if spelling not in self._by_spelling:
            found = self._key(spelling)
            if found is None:
                self._by_spelling[spelling] = None
            else:
                key, is_user, entity_id, entity_name = found
                subject = self.subjects.get(key)
                if subject is None:
                    subject = Subject(key=key, is_user=is_user, entity_name=entity_name)
                    if entity_id is not None:
                        subject.names |= set(
                            EntityAlias.objects.filter(
                                space=self.space, entity_id=entity_id
                            ).values_list("alias", flat=True)
                        )
                    self.subjects[key] = subject
                subject.names.add(spelling.strip())
                self._by_spelling[spelling] = key
        known = self._by_spelling[spelling]
        if known is None:
            return None
        subject = self.subjects[known]
        subject._spellings[spelling.strip()] += 1
        return subject
