"""Step 4: decay and expire.

Each live fact gets an Ebbinghaus-style retention score

    score = exp(-age / strength) × importance,  strength = half_life × (1 + ln frequency) / ln 2

where age runs from its last_seen to the space's present. Facts scoring below
DECAY_ARCHIVE_BELOW are archived: out of recall, still browsable and
restorable. Standing instructions, insights and facts at or above
DECAY_PROTECT_IMPORTANCE never decay. Event facts past their horizon (their own
valid_to, or DECAY_EVENT_HORIZON_DAYS after they happened) expire."""

from __future__ import annotations

import math
from datetime import timedelta

from django.db import transaction
from django.db.models import Q

from consolidation.jobs._common import ACTOR, StepContext, StepResult, cfg, space_now
from memory.models import MemoryItem
from memory.selectors import live_items
from memory.services import audit
from memory.services.forget import bring_back
from memory.services.graph import suspend_relations

NEVER_DECAY = [MemoryItem.Kind.INSTRUCTION, MemoryItem.Kind.INSIGHT]


def retention(*, age_days: float, frequency: int, importance: float) -> float:
    half_life = float(cfg("DECAY_HALF_LIFE_DAYS"))
    strength = half_life * (1.0 + math.log(max(1, frequency))) / math.log(2)
    return math.exp(-max(0.0, age_days) / strength) * max(0.0, min(1.0, importance))


def run(ctx: StepContext) -> StepResult:
    from memory.services.facts import invalidate

    result = StepResult(counts={"archived": 0, "expired": 0, "scored": 0})
    now = space_now(ctx.space)

    # Events past their horizon.
    horizon = now - timedelta(days=cfg("DECAY_EVENT_HORIZON_DAYS"))
    events = (
        live_items(ctx.space)
        .filter(kind=MemoryItem.Kind.EVENT)
        .filter(
            Q(valid_to__lt=now)
            | Q(valid_to=None, valid_from__lt=horizon)
            | Q(valid_to=None, valid_from=None, created_at__lt=horizon)
        )
    )
    for item in list(events):
        if invalidate(item=item, actor=ACTOR, reason="event past its horizon"):
            result.add("expired")

    # Forgetting curve over what is left.
    threshold = cfg("DECAY_ARCHIVE_BELOW")
    min_age = timedelta(days=cfg("DECAY_MIN_AGE_DAYS"))
    candidates = (
        live_items(ctx.space)
        .exclude(kind__in=NEVER_DECAY)
        .filter(importance__lt=cfg("DECAY_PROTECT_IMPORTANCE"), last_seen__lt=now - min_age)
        .exclude(beliefs__status="active")  # evidence of a standing belief stays in view
        # Under review scheduling, recall practice decides its fate, not age.
        .exclude(palace__due_at__isnull=False)
        .only("pk", "last_seen", "frequency", "importance")
    )
    to_archive: list[tuple[int, float]] = []
    for item in candidates.iterator(chunk_size=1000):
        result.add("scored")
        age = (now - item.last_seen).total_seconds() / 86400
        score = retention(age_days=age, frequency=item.frequency, importance=item.importance)
        if score < threshold:
            to_archive.append((item.pk, score))
    for start in range(0, len(to_archive), 200):
        chunk = to_archive[start : start + 200]
        with transaction.atomic():
            still_live = MemoryItem.objects.filter(
                pk__in=[pk for pk, _ in chunk], status=MemoryItem.Status.ACTIVE, expired_at=None
            )
            # A fact forgotten or superseded since it was scored is left alone;
            # only the facts archived here lose their edges and get an audit row.
            archived = set(still_live.values_list("pk", flat=True))
            done = MemoryItem.objects.filter(
                pk__in=archived, status=MemoryItem.Status.ACTIVE, expired_at=None
            ).update(status=MemoryItem.Status.ARCHIVED)
            # Out of recall means out of the graph too; restore reopens them.
            suspend_relations(item_ids=archived)
            for pk, score in chunk:
                if pk not in archived:
                    continue
                audit.record(
                    space=ctx.space,
                    action="archive",
                    target_type="item",
                    target_id=pk,
                    actor=ACTOR,
                    score=round(score, 4),
                )
        result.add("archived", done)
    return result


def restore(*, item: MemoryItem, actor: str) -> bool:
    """Bring an archived fact back into recall, seen now, with its edges."""
    return bring_back(item=item, actor=actor, archived_only=True)
