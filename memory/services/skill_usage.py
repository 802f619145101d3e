"""Counting a skill's uses: each time recall hands it to an agent (POST
/recall, memory_search, the context's recalled block) and each time an agent
reports using it (memory_report). The consolidator's skills step reads
usage_count and last_used_at to reinforce the facts a used skill relies on.

Recall stays read-only on its own path: the count is one UPDATE of the few
returned skills, run on a helper thread after the answer is computed, so a
writer holding SQLite's lock delays the count, never the answer. Inside a
transaction (tests, an atomic caller) it runs in place, because a helper
could not see that transaction's rows."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from django.db import connection
from django.db.models import F
from django.utils import timezone

from engram_site.threads import DbThreadPool
from memory.errors import NotFound
from memory.models import Skill, Space
from memory.services import audit

log = logging.getLogger(__name__)

_counter = DbThreadPool("engram-skill-usage", 1)


def record_use(*, space_id: int, skill_ids: Iterable[int], at: datetime | None = None) -> int:
    """One more use of each enabled skill among skill_ids. Returns how many rows counted."""
    ids = sorted({int(i) for i in skill_ids})
    if not ids:
        return 0
    return Skill.objects.filter(space_id=space_id, pk__in=ids, enabled=True).update(
        usage_count=F("usage_count") + 1, last_used_at=at or timezone.now()
    )


def _count_quietly(space_id: int, ids: list[int], at: datetime) -> None:
    try:
        record_use(space_id=space_id, skill_ids=ids, at=at)
    except Exception:  # a lost count must never fail or slow a recall
        log.warning("could not count uses of skills %s", ids, exc_info=True)


def returned(*, space_id: int, results: Iterable[object]) -> None:
    """Recall returned these results to an agent: count the skills among them."""
    ids = [int(str(getattr(r, "id", ""))) for r in results if getattr(r, "type", "") == "skill"]
    if not ids:
        return
    now = timezone.now()
    if connection.in_atomic_block:
        _count_quietly(space_id, ids, now)
    else:
        _counter.submit(_count_quietly, space_id, ids, now)


def report(*, space: Space, skill_id: int, actor: str, note: str = "") -> Skill:
    """An agent says it used this skill."""
    if not record_use(space_id=space.pk, skill_ids=[skill_id]):
        raise NotFound(f"no enabled skill {skill_id} in this space")
    audit.record(
        space=space,
        action="use",
        target_type="skill",
        target_id=skill_id,
        actor=actor,
        **({"note": note} if note else {}),
    )
    return Skill.objects.get(pk=skill_id)
