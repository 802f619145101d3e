"""A curator's decision on a fact the pipeline kept pending review (a DEFER:
it may contradict live facts, listed in its metadata's `contradicts`).

- accept: the candidate is right; it becomes active and supersedes what it
  contradicts (their history is kept, closed where the candidate begins).
- reject: the candidate is wrong; it is forgotten (soft, restorable) and the
  old facts stay as they are.
- merge: the candidate says the same as the old fact; the old one is
  reinforced (seen once more) and the candidate is closed as merged into it.

Every decision is audited here, with the facts it touched."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memory.errors import Conflict, Invalid
from memory.models import MemoryItem, PalaceEntry, Space
from memory.services import audit, facts
from memory.services.forget import forget
from memory.services.palace import slots as palace_slots


def contradicted_ids(item: MemoryItem) -> list[int]:
    raw = (item.metadata or {}).get("contradicts") or []
    return [int(x) for x in raw if str(x).isdigit()]


def _pending(space: Space, item: MemoryItem) -> None:
    if item.space_id != space.pk:
        raise Invalid(f"id: item {item.pk} is not in this space")
    # Decided already (or closed since): a conflict with that decision, not bad input.
    if item.status != MemoryItem.Status.PENDING_REVIEW:
        raise Conflict(f"item {item.pk} is not pending review ({item.status})")
    if item.expired_at is not None:
        raise Conflict(f"item {item.pk} is already closed")


def accept(*, space: Space, item: MemoryItem, actor: str) -> list[int]:
    """The candidate becomes active and supersedes the live facts it
    contradicts. Returns the ids it superseded."""
    _pending(space, item)
    with transaction.atomic():
        changed = MemoryItem.objects.filter(
            pk=item.pk, status=MemoryItem.Status.PENDING_REVIEW, expired_at=None
        ).update(status=MemoryItem.Status.ACTIVE)
        if not changed:
            raise Conflict(f"item {item.pk} was decided already")
        item.status = MemoryItem.Status.ACTIVE
        olds = MemoryItem.objects.filter(
            space=space, pk__in=contradicted_ids(item), expired_at=None
        ).exclude(pk=item.pk)
        superseded = [old.pk for old in olds if facts.supersede(old=old, new=item, actor=actor)]
        audit.record(
            space=space,
            action="review_accept",
            target_type="item",
            target_id=item.pk,
            actor=actor,
            superseded=superseded,
        )
        if item.is_live:
            facts.link_item(space=space, item=item)
            if not PalaceEntry.objects.filter(item=item).exists():
                palace_slots.place_item(item, enrol=False)
    if item.is_live:
        transaction.on_commit(lambda: facts.embed_later(space_id=space.pk, item_ids=[item.pk]))
    return superseded


def reject(*, space: Space, item: MemoryItem, actor: str) -> int:
    """The candidate is forgotten (audited by forget); the old facts stay."""
    _pending(space, item)
    with transaction.atomic():
        count = forget(space=space, item_id=item.pk, actor=actor)
        audit.record(
            space=space,
            action="review_reject",
            target_type="item",
            target_id=item.pk,
            actor=actor,
            kept=contradicted_ids(item),
        )
    return count


def merge(*, space: Space, item: MemoryItem, into: MemoryItem, actor: str) -> MemoryItem:
    """The candidate says what `into` (one of the facts it contradicts, live)
    says: `into` is reinforced, the candidate closed as merged into it."""
    _pending(space, item)
    if into.space_id != space.pk or into.pk not in contradicted_ids(item) or not into.is_live:
        raise Invalid(f"into: item {into.pk} is not a live fact this one contradicts")
    now = timezone.now()
    with transaction.atomic():
        facts.reinforce(item=into, turn_refs=item.source_turn_refs or [], at=now)
        # Decided: an ordinary closed fact in the history, not pending any more.
        MemoryItem.objects.filter(pk=item.pk).update(status=MemoryItem.Status.ACTIVE)
        item.status = MemoryItem.Status.ACTIVE
        facts.invalidate(item=item, actor=actor, reason=f"merged into {into.pk}", at=now)
        audit.record(
            space=space,
            action="review_merge",
            target_type="item",
            target_id=item.pk,
            actor=actor,
            merged_into=into.pk,
        )
    return into
