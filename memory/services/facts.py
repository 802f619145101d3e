"""Semantic facts (L3): the explicit write path and the lifecycle helpers.

`save_fact` is what `POST /memory/facts` and `memory_save block=auto` call. It
shares steps 3–7 with the turn pipeline: screen, retrieve similar live facts,
resolve (ADD/UPDATE/DELETE/NOOP/DEFER/DROP), apply with graph edges, propose a
core-memory patch, then embed after commit.

Nothing here deletes: `supersede` and `invalidate` close a fact's windows
(valid_to, expired_at, superseded_by) and its graph edges, and audit it."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from memory import embeddings
from memory.models import MemoryItem, Session, Space
from memory.screening import screen
from memory.selectors import live_items
from memory.services import audit, graph
from memory.services.pipeline import core_patch, resolve, retrieve, rules
from memory.services.pipeline.candidates import Candidate, content_hash

log = logging.getLogger(__name__)


@dataclass
class FactResult:
    item: MemoryItem | None  # None only for DROP
    action: str  # ADD | UPDATE | NOOP | DELETE | DEFER | DROP
    superseded: list[int] = field(default_factory=list)
    reason: str = ""
    core_changed: bool = False


# --- lifecycle helpers ---------------------------------------------------------------------


def supersede(*, old: MemoryItem, new: MemoryItem, actor: str, at: datetime | None = None) -> bool:
    """`new` replaces `old`: old stops being true when new starts (or now), is
    marked known-expired now, and points at new. False if old was not live."""
    now = at or timezone.now()
    valid_to = new.valid_from or now
    if old.valid_from is not None and valid_to <= old.valid_from:
        # The new value is dated before the old one began (it was learned
        # late): the old one still ends when Engram learned otherwise.
        valid_to = now
    if old.valid_to is not None and old.valid_to < valid_to:
        valid_to = old.valid_to
    changed = MemoryItem.objects.filter(pk=old.pk, expired_at=None).update(
        valid_to=valid_to, expired_at=now, superseded_by=new
    )
    if not changed:
        return False
    old.valid_to, old.expired_at, old.superseded_by = valid_to, now, new
    graph.expire_relations(item=old)
    audit.record(
        space=old.space_id,
        action="expire",
        target_type="item",
        target_id=old.pk,
        actor=actor,
        reason="superseded",
        superseded_by=new.pk,
    )
    return True


def invalidate(*, item: MemoryItem, actor: str, reason: str, at: datetime | None = None) -> bool:
    """The fact is no longer true (retracted, merged away, wrong): close its
    windows and edges, keep the row. False if it was not live."""
    now = at or timezone.now()
    valid_to = item.valid_to if item.valid_to is not None and item.valid_to < now else now
    changed = MemoryItem.objects.filter(pk=item.pk, expired_at=None).update(
        valid_to=valid_to, expired_at=now
    )
    if not changed:
        return False
    item.valid_to, item.expired_at = valid_to, now
    graph.expire_relations(item=item)
    audit.record(
        space=item.space_id,
        action="delete",
        target_type="item",
        target_id=item.pk,
        actor=actor,
        reason=reason,
    )
    return True


def reinforce(
    *, item: MemoryItem, turn_refs: Iterable[str] = (), at: datetime | None = None
) -> None:
    """A duplicate was seen again: bump frequency and last_seen, keep provenance."""
    now = at or timezone.now()
    refs = list(item.source_turn_refs or [])
    for ref in turn_refs:
        if ref and ref not in refs:
            refs.append(ref)
    item.frequency += 1
    item.last_seen = now
    item.source_turn_refs = refs[-50:]
    MemoryItem.objects.filter(pk=item.pk).update(
        frequency=item.frequency, last_seen=now, source_turn_refs=item.source_turn_refs
    )


# --- applying one decision -------------------------------------------------------------------


@dataclass
class Provenance:
    source: str = "api"
    actor: str = "api"
    session: Session | None = None
    turn_refs: Sequence[str] = ()


def _create(
    *,
    space: Space,
    candidate: Candidate,
    disposition: str,
    prov: Provenance,
    status: str = MemoryItem.Status.ACTIVE,
    flagged_reasons: list[str] | None = None,
    metadata: dict[str, object] | None = None,
) -> MemoryItem:
    now = timezone.now()
    return MemoryItem.objects.create(
        space=space,
        text=candidate.text,
        kind=candidate.kind,
        subject=candidate.subject,
        predicate=candidate.predicate,
        object=candidate.object,
        importance=candidate.importance,
        last_seen=now,
        valid_from=candidate.valid_from or now,
        created_at=now,
        status=status,
        screen_status=MemoryItem.Screen.FLAGGED if flagged_reasons else MemoryItem.Screen.OK,
        screen_reasons=flagged_reasons or [],
        source=prov.source[:60],
        source_session=prov.session,
        source_turn_refs=[r for r in prov.turn_refs if r],
        disposition=disposition,
        content_hash=content_hash(candidate.text),
        metadata=metadata or {},
    )


def apply(*, space: Space, decision: resolve.Decision, prov: Provenance) -> FactResult:
    """Write one decision. Must run inside a transaction; re-checks what it
    decided against the rows as they are now, so two workers resolving the
    same fact concurrently cannot both add it."""
    c = decision.candidate
    action = decision.action
    live = live_items(space)
    if action == "DROP":
        audit.record(
            space=space,
            action="drop",
            target_type="item",
            actor=prov.actor,
            text=c.text[:200],
            reason=decision.reason,
        )
        return FactResult(item=None, action="DROP", reason=decision.reason)

    targets = list(live.filter(pk__in=[t.pk for t in decision.targets]))
    if action in ("ADD", "UPDATE", "DEFER"):
        dup = live.filter(content_hash=content_hash(c.text)).first()
        if dup is not None:
            action, targets = "NOOP", [dup]
    if action == "NOOP" and not targets:
        if decision.reason == "nothing live to retract":
            audit.record(
                space=space,
                action="noop",
                target_type="item",
                actor=prov.actor,
                text=c.text[:200],
                reason=decision.reason,
            )
            return FactResult(item=None, action="NOOP", reason=decision.reason)
        action = "ADD"  # the duplicate it matched was expired meanwhile
    if action in ("UPDATE", "DELETE") and not targets:
        if action == "DELETE":
            return FactResult(item=None, action="NOOP", reason="already invalidated")
        action = "ADD"

    if action == "NOOP":
        item = targets[0]
        reinforce(item=item, turn_refs=prov.turn_refs)
        audit.record(
            space=space,
            action="noop",
            target_type="item",
            target_id=item.pk,
            actor=prov.actor,
            reason=decision.reason,
            frequency=item.frequency,
        )
        return FactResult(item=item, action="NOOP", reason=decision.reason)

    if action == "DELETE":
        gone = [t.pk for t in targets if invalidate(item=t, actor=prov.actor, reason=c.text[:200])]
        return FactResult(item=targets[0], action="DELETE", superseded=gone, reason=decision.reason)

    if action == "DEFER":
        item = _create(
            space=space,
            candidate=c,
            disposition="DEFER",
            prov=prov,
            status=MemoryItem.Status.PENDING_REVIEW,
            metadata={"contradicts": [t.pk for t in targets], "reason": decision.reason},
        )
        audit.record(
            space=space,
            action="defer",
            target_type="item",
            target_id=item.pk,
            actor=prov.actor,
            contradicts=[t.pk for t in targets],
            reason=decision.reason,
        )
        return FactResult(item=item, action="DEFER", reason=decision.reason)

    # ADD or UPDATE. A functional predicate keeps one live value: whatever is
    # live for it now is superseded, including a value another worker just added.
    if c.functional and c.subject:
        same = list(live.filter(subject__iexact=c.subject, predicate=c.predicate))
        if same:
            seen = {t.pk for t in targets}
            targets += [s for s in same if s.pk not in seen]
            action = "UPDATE"
    item = _create(space=space, candidate=c, disposition=action, prov=prov)
    superseded = [
        t.pk for t in targets if action == "UPDATE" and supersede(old=t, new=item, actor=prov.actor)
    ]
    if action == "UPDATE" and not superseded:
        action = "ADD"
        MemoryItem.objects.filter(pk=item.pk).update(disposition="ADD")
        item.disposition = "ADD"
    audit.record(
        space=space,
        action=action.lower(),
        target_type="item",
        target_id=item.pk,
        actor=prov.actor,
        text=item.text[:200],
        superseded=superseded,
        reason=decision.reason,
        decided_by=decision.decided_by,
    )
    return FactResult(item=item, action=action, superseded=superseded, reason=decision.reason)


def link_item(*, space: Space, item: MemoryItem) -> int:
    """Step 5: the item's subject -predicate-> object edge (and entities)."""
    if not (item.subject and item.predicate and item.object) or not item.is_live:
        return 0
    try:
        relation = graph.link(
            space=space, item=item, src_name=item.subject, rel=item.predicate, dst_name=item.object
        )
    except ValueError:
        return 0
    return 1 if relation is not None else 0


def quarantine(
    *, space: Space, candidate: Candidate, reasons: list[str], prov: Provenance
) -> FactResult:
    """A flagged write is stored for curators and never resolved against, or
    recalled beside, the live facts."""
    item = _create(
        space=space, candidate=candidate, disposition="ADD", prov=prov, flagged_reasons=reasons
    )
    audit.record(
        space=space,
        action="quarantine",
        target_type="item",
        target_id=item.pk,
        actor=prov.actor,
        reasons=reasons,
    )
    return FactResult(item=item, action="ADD", reason="quarantined")


def embed_later(*, space_id: int, item_ids: list[int]) -> None:
    """Step 7 after commit. A failing embedder never fails a write: the
    consolidator embeds whatever has no vector yet."""
    ids = [i for i in item_ids if i]
    if not ids or not embeddings.enabled():
        return
    try:
        embeddings.index_items(space_id=space_id, item_ids=ids)
    except Exception as exc:
        log.warning("embedding items %s failed (embedded later): %s", ids, exc)


# --- the explicit write path -------------------------------------------------------------------


def _screened(c: Candidate) -> tuple[Candidate, list[str]]:
    result = screen(c.text)
    reasons = list(result.reasons) if result.flagged else []
    c.text = result.text
    for name in ("subject", "object"):
        part = screen(getattr(c, name))
        setattr(c, name, part.text)
        if part.flagged:
            reasons += [r for r in part.reasons if r not in reasons]
    return c, reasons


def save_fact(
    *,
    space: Space,
    text: str,
    subject: str = "",
    predicate: str = "",
    object: str = "",
    kind: str = "fact",
    importance: float = 0.5,
    valid_from: datetime | None = None,
    source: str = "api",
    actor: str = "api",
    session: Session | None = None,
    turn_refs: Sequence[str] = (),
) -> FactResult:
    """Store one fact through screening, resolution and the graph."""
    candidate = Candidate(
        text=text,
        kind=kind,
        subject=subject,
        predicate=predicate,
        object=object,
        importance=importance,
        valid_from=valid_from,
    )
    candidate, flagged = _screened(candidate)
    prov = Provenance(source=source, actor=actor, session=session, turn_refs=tuple(turn_refs))
    if flagged:
        with transaction.atomic():
            return quarantine(space=space, candidate=candidate, reasons=flagged, prov=prov)
    if not candidate.predicate:
        # Plain text: let the rule extractor find its structure, so "I moved
        # to Berlin" supersedes "User lives in Lisbon" and "I no longer ..."
        # retracts.
        found = rules.extract(candidate.text, now=valid_from or timezone.now())
        if len(found) == 1:
            f = found[0]
            candidate.subject = candidate.subject or f.subject
            candidate.predicate = f.predicate
            candidate.object = candidate.object or f.object
            candidate.retract = f.retract
            candidate.valid_from = candidate.valid_from or f.valid_from
            if kind == "fact":
                candidate.kind = f.kind
    neighbours = retrieve.similar(space=space, candidate=candidate)
    decision = resolve.decide(candidate, neighbours)
    with transaction.atomic():
        result = apply(space=space, decision=decision, prov=prov)
        if result.item is not None and result.action in ("ADD", "UPDATE"):
            link_item(space=space, item=result.item)
            result.core_changed = core_patch.propose(space=space, item=result.item)
    if result.item is not None and result.action in ("ADD", "UPDATE", "DEFER"):
        item_id = result.item.pk
        transaction.on_commit(lambda: embed_later(space_id=space.pk, item_ids=[item_id]))
    return result
