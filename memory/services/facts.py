"""Semantic facts (L3): the explicit write path and the lifecycle helpers.

`save_fact` is what `POST /memory/facts` and `memory_save block=auto` call. It
shares steps 3–7 with the turn pipeline: screen, retrieve similar live facts,
resolve (ADD/UPDATE/DELETE/NOOP/DEFER/DROP), apply with graph edges, propose a
core-memory patch, then embed after commit.

Nothing here deletes: `supersede` and `invalidate` close a fact's windows
(valid_to, expired_at, superseded_by) and its graph edges, and audit it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from memory import embeddings
from memory.models import FactRevision, MemoryItem, Retraction, Session, Space, Turn, TurnFact
from memory.screening import screen, screen_fact
from memory.selectors import live_items
from memory.services import audit, core, graph, identity
from memory.services.palace import slots as palace_slots
from memory.services.pipeline import core_patch, resolve, retrieve, rules
from memory.services.pipeline.candidates import Candidate, content_hash, spellings
from memory.services.providers import mirror as provider_mirror

log = logging.getLogger(__name__)


@dataclass
class FactResult:
    item: MemoryItem | None  # None only for DROP
    action: str  # ADD | UPDATE | NOOP | DELETE | DEFER | DROP
    superseded: list[int] = field(default_factory=list)
    reason: str = ""
    core_changed: bool = False
    # Stored for curators but never recalled, and why (the screen's reasons).
    quarantined: bool = False
    reasons: list[str] = field(default_factory=list)


# --- lifecycle helpers ---------------------------------------------------------------------


def _close(
    item: MemoryItem,
    *,
    valid_to: datetime | None,
    superseded_by: MemoryItem | None,
    known: datetime,
    reason: str,
    valid_from: datetime | None = None,
    expire: bool = True,
) -> bool:
    """Change a fact's window, recording first the window it had (the
    FactRevision a `known_at` read rebuilds the past from). The update only
    applies if the row still holds the window read into `item`, so two
    writers cannot both close it. False if it changed meanwhile."""
    new_from = valid_from if valid_from is not None else item.valid_from
    expired_at = item.expired_at or (known if expire else None)
    changed = MemoryItem.objects.filter(
        pk=item.pk,
        expired_at=item.expired_at,
        valid_to=item.valid_to,
        valid_from=item.valid_from,
    ).update(
        valid_from=new_from,
        valid_to=valid_to,
        expired_at=expired_at,
        superseded_by=superseded_by if superseded_by is not None else item.superseded_by,
    )
    if not changed:
        return False
    FactRevision.objects.create(
        space_id=item.space_id,
        item=item,
        recorded_at=known,
        prior_valid_from=item.valid_from,
        prior_valid_to=item.valid_to,
        prior_expired_at=item.expired_at,
        prior_superseded_by=item.superseded_by_id,
        reason=reason[:40],
    )
    item.valid_from, item.valid_to, item.expired_at = new_from, valid_to, expired_at
    if superseded_by is not None:
        item.superseded_by = superseded_by
    return True


def supersede(*, old: MemoryItem, new: MemoryItem, actor: str, at: datetime | None = None) -> bool:
    """`new` replaces `old`: old stopped being true when new became true (its
    valid_from, never the time this runs), Engram learned so now (`at`), and
    old points at new. False if old was not live."""
    now = at or timezone.now()
    if old.expired_at is not None:
        return False
    valid_to = new.valid_from or now
    if old.valid_from is not None and valid_to < old.valid_from:
        # Dated before the old value began: the old value's own start is the
        # best bound Engram has (apply() places older values as history).
        valid_to = old.valid_from
    if old.valid_to is not None and old.valid_to < valid_to:
        valid_to = old.valid_to
    if not _close(old, valid_to=valid_to, superseded_by=new, known=now, reason="superseded"):
        return False
    graph.expire_relations(item=old)
    if old.importance >= core_patch.IDENTITY_IMPORTANCE:  # only those reach core memory
        # new.space is loaded (old's would be a query): they share the space.
        core.follow_fact(space=new.space, item=old, successor=new)
    audit.record(
        space=old.space_id,
        action="expire",
        target_type="item",
        target_id=old.pk,
        actor=actor,
        reason="superseded",
        superseded_by=new.pk,
        valid_to=valid_to.isoformat(),
    )
    return True


def invalidate(
    *,
    item: MemoryItem,
    actor: str,
    reason: str,
    at: datetime | None = None,
    valid_to: datetime | None = None,
) -> bool:
    """The fact is no longer true (retracted, merged away, wrong): close its
    windows and edges, keep the row. `valid_to` is when it stopped being true
    in the world (a retraction turn's date), `at` when Engram learned it;
    both default to now. False if it was not live."""
    now = at or timezone.now()
    if item.expired_at is not None:
        return False
    end = valid_to or now
    if item.valid_from is not None and end < item.valid_from:
        end = item.valid_from
    if item.valid_to is not None and item.valid_to < end:
        end = item.valid_to
    if not _close(item, valid_to=end, superseded_by=None, known=now, reason="invalidated"):
        return False
    graph.expire_relations(item=item)
    if item.importance >= core_patch.IDENTITY_IMPORTANCE:
        core.follow_fact(space=item.space, item=item)
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
    # The turn the fact was said in (linked as its statement), and the
    # instant a fact without a date of its own became true: the turn's `ts`,
    # or the request time of an explicit write.
    turn: Turn | None = None
    said_at: datetime | None = None
    # New knowledge enrols in spaced-repetition review; a backfilled turn,
    # an import or a distilled entry was not learned just now.
    enrol: bool = True


def _create(
    *,
    space: Space,
    candidate: Candidate,
    disposition: str,
    prov: Provenance,
    status: str = MemoryItem.Status.ACTIVE,
    flagged_reasons: list[str] | None = None,
    metadata: dict[str, object] | None = None,
    valid_to: datetime | None = None,
    superseded_by: MemoryItem | None = None,
) -> MemoryItem:
    now = timezone.now()
    item = MemoryItem.objects.create(
        space=space,
        text=candidate.text,
        kind=candidate.kind,
        subject=candidate.subject,
        predicate=candidate.predicate,
        object=candidate.object,
        importance=candidate.importance,
        last_seen=now,
        valid_from=candidate.valid_from or prov.said_at or now,
        valid_to=valid_to,
        stated_at=prov.said_at or now,
        created_at=now,
        # Born as history (an older value learned late): known ended from the start.
        expired_at=now if valid_to is not None else None,
        superseded_by=superseded_by,
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
    stated(item=item, prov=prov)
    if item.is_live:
        # Every write comes through here: this is where an entry is pinned
        # to its room#slot (memory/services/palace/slots.py).
        palace_slots.place_item(item, enrol=prov.enrol and not item.source.startswith("import"))
    return item


def stated(*, item: MemoryItem, prov: Provenance) -> None:
    """Link the fact to the turn that said it (see TurnFact)."""
    if prov.turn is not None:
        TurnFact.objects.bulk_create(
            [TurnFact(space_id=item.space_id, turn=prov.turn, item=item)], ignore_conflicts=True
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

    # A fact without a date of its own became true when it was said.
    c.valid_from = c.valid_from or prov.said_at or timezone.now()
    # The decided targets as they are now, and a live duplicate of the text
    # (one another worker added meanwhile), in one query.
    wanted = Q(pk__in=[t.pk for t in decision.targets])
    digest = content_hash(c.text) if action in ("ADD", "UPDATE", "DEFER") else None
    rows = list(live.filter(wanted | Q(content_hash=digest)) if digest else live.filter(wanted))
    decided = {t.pk for t in decision.targets}
    targets = [r for r in rows if r.pk in decided]
    dups = [r for r in rows if r.content_hash == digest]
    dup = max(dups, key=lambda r: (r.created_at, r.pk)) if dups else None  # the newest
    if dup is not None:
        action, targets = "NOOP", [dup]
    if action in ("NOOP", "DEFER") and _new_single_value(c, targets):
        # A single-valued predicate with another value is a change, whoever
        # decided (the rules and an LLM resolver must agree on this).
        action = "UPDATE"
    if action == "NOOP" and targets and _known_from_earlier(c, targets[0], prov):
        # The live value was already true before Engram thought it began:
        # the chain logic below moves its start back.
        action, targets = "UPDATE", []
    if action == "NOOP" and not targets:
        if decision.reason == "nothing live to retract":
            _remember_retraction(space, c, prov)
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
            _remember_retraction(space, c, prov)
            return FactResult(item=None, action="NOOP", reason="already invalidated")
        action = "ADD"

    if action == "NOOP":
        return _noop(space, targets[0], prov, decision.reason)

    if action == "DELETE":
        # Stopped being true when the user said so (or on the date they gave).
        ended = c.valid_from or prov.said_at
        _remember_retraction(space, c, prov)
        gone = [
            t.pk
            for t in targets
            if invalidate(item=t, actor=prov.actor, reason=c.text[:200], valid_to=ended)
        ]
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

    # ADD or UPDATE. A functional predicate keeps one value at a time: the
    # facts it replaces are every value of the chain (live or history) for
    # its subject and predicate, including one another worker just added.
    chain = list(targets) if action == "UPDATE" else []
    said = prov.said_at or timezone.now()
    if c.functional and c.subject:
        seen = {t.pk for t in chain}
        chain += [f for f in _chain(space, c, said=said) if f.pk not in seen]
    later = sorted((f for f in chain if _said(f) > said), key=lambda f: (_said(f), f.pk))
    if later:
        return _place_as_history(space=space, c=c, chain=chain, later=later, prov=prov)
    taken_back = _retracted_after(space, c, said)
    item = _create(
        space=space,
        candidate=c,
        disposition="UPDATE" if chain else action,
        prov=prov,
        # Already taken back by a turn said later (and processed earlier).
        valid_to=max(taken_back.said_at, c.valid_from) if taken_back else None,
    )
    superseded = [t.pk for t in chain if supersede(old=t, new=item, actor=prov.actor)]
    action = "UPDATE" if superseded else "ADD"
    if item.disposition != action:
        MemoryItem.objects.filter(pk=item.pk).update(disposition=action)
        item.disposition = action
    _audit_write(space, item, action, superseded, decision, prov)
    return FactResult(item=item, action=action, superseded=superseded, reason=decision.reason)


def lock_space_writes(space: Space) -> None:
    """Writers of one space's facts take turns, for the rest of the
    transaction: call first in it, before any write. SQLite's write
    transactions already do. On PostgreSQL two workers would otherwise both
    read a single-valued chain before either wrote, and locks taken in the
    middle (a chain, then the shared core block row) deadlock each other."""
    if connection.vendor == "postgresql":
        key = int.from_bytes(
            hashlib.blake2b(f"engram-space:{space.pk}".encode(), digest_size=8).digest(),
            "big",
            signed=True,
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def _chain(space: Space, c: Candidate, *, said: datetime) -> list[MemoryItem]:
    """The known values of the candidate's subject and single-valued predicate
    (the caller holds lock_space_writes): all of them, live or history, when
    one was said after `said` (the candidate then goes into history between
    them); otherwise only the live ones, the only ones it can replace, so a
    value changed a hundred times does not load a hundred rows per write."""
    values = MemoryItem.objects.filter(
        space=space,
        subject__in=spellings(c.subject),
        predicate=c.predicate,
        status=MemoryItem.Status.ACTIVE,
        screen_status=MemoryItem.Screen.OK,
    )
    # One query in the usual case: the live values and any said later.
    said_at = Coalesce("stated_at", "valid_from", "created_at")
    found: list[MemoryItem] = list(
        values.annotate(said=said_at).filter(Q(expired_at=None) | Q(said__gt=said))
    )
    if any(_said(f) > said for f in found):
        return list(values)  # the whole chain, history too
    return found


def _remember_retraction(space: Space, c: Candidate, prov: Provenance) -> None:
    Retraction.objects.create(
        space=space,
        subject=c.subject[:200],
        predicate=c.predicate[:100],
        object=c.object[:500],
        said_at=c.valid_from or prov.said_at or timezone.now(),
        turn=prov.turn,
    )


def _retracted_after(
    space: Space, c: Candidate, said: datetime, *, before: datetime | None = None
) -> Retraction | None:
    """The first retraction of this value said after `said` (and before the
    next value, if any): a backfilled fact that was already taken back."""
    if not (c.subject and c.predicate):
        return None
    found = Retraction.objects.filter(
        space=space, subject__in=spellings(c.subject), predicate=c.predicate, said_at__gt=said
    )
    if before is not None:
        found = found.filter(said_at__lt=before)
    obj = graph.normalize(c.object)
    for retraction in found.order_by("said_at", "id"):
        if not retraction.object or graph.normalize(retraction.object) == obj:
            return retraction
    return None


def _new_single_value(c: Candidate, targets: list[MemoryItem]) -> bool:
    if not (c.functional and c.subject and c.object and not c.retract):
        return False
    return any(
        t.predicate == c.predicate
        and graph.normalize(t.subject) == graph.normalize(c.subject)
        and graph.normalize(t.object) != graph.normalize(c.object)
        for t in targets
    )


def _said(item: MemoryItem) -> datetime:
    return item.stated_at or item.valid_from or item.created_at


def _known_from_earlier(c: Candidate, item: MemoryItem, prov: Provenance) -> bool:
    """The candidate restates `item`'s value, but was said before it."""
    return bool(
        c.functional
        and prov.said_at is not None
        and prov.said_at < _said(item)
        and graph.normalize(item.object) == graph.normalize(c.object)
    )


def _open_at(item: MemoryItem, at: datetime) -> bool:
    return item.valid_to is None or item.valid_to > at


def _place_as_history(
    *,
    space: Space,
    c: Candidate,
    chain: list[MemoryItem],
    later: list[MemoryItem],
    prov: Provenance,
) -> FactResult:
    """A value said before one Engram already holds (a backfill, an import,
    a turn processed late): it becomes history between the value said before
    it and the one said after, so arrival order never changes what is current
    or how long each value lasted."""
    assert c.valid_from is not None
    when = c.valid_from
    now = timezone.now()
    nxt = later[0]
    before = [f for f in chain if f not in later]
    prev = max(before, key=lambda f: (_said(f), f.pk), default=None)
    if prev is not None and graph.normalize(prev.object) == graph.normalize(c.object):
        return _noop(space, prev, prov, "restates the value held then")
    end_prev = nxt
    if graph.normalize(nxt.object) == graph.normalize(c.object):
        # The later value was already true when this was said: its window
        # starts earlier than Engram knew.
        if nxt.valid_from is None or when < nxt.valid_from:
            _close(
                nxt,
                valid_to=nxt.valid_to,
                superseded_by=None,
                known=now,
                reason="earlier start",
                valid_from=when,
                expire=False,
            )
        result = _noop(space, nxt, prov, "the same value, known from earlier")
        item = None
    else:
        end = max(nxt.valid_from or when, when)
        taken_back = _retracted_after(space, c, prov.said_at or now, before=_said(nxt))
        item = _create(
            space=space,
            candidate=c,
            disposition="ADD",
            prov=prov,
            valid_to=min(end, max(taken_back.said_at, when)) if taken_back else end,
            superseded_by=None if taken_back else nxt,
        )
        end_prev = item
        result = FactResult(item=item, action="ADD", reason="an older value: kept as history")
    if prev is not None and _open_at(prev, when):
        was_live = prev.expired_at is None
        prev_end = max(when, prev.valid_from) if prev.valid_from else when
        if _close(prev, valid_to=prev_end, superseded_by=end_prev, known=now, reason="superseded"):
            result.superseded.append(prev.pk)
            if was_live:
                graph.expire_relations(item=prev)
    if item is not None:
        decision = resolve.Decision(c, "ADD", reason=result.reason)
        _audit_write(space, item, "ADD", result.superseded, decision, prov)
    return result


def _noop(space: Space, item: MemoryItem, prov: Provenance, reason: str) -> FactResult:
    reinforce(item=item, turn_refs=prov.turn_refs)
    stated(item=item, prov=prov)
    audit.record(
        space=space,
        action="noop",
        target_type="item",
        target_id=item.pk,
        actor=prov.actor,
        reason=reason,
        frequency=item.frequency,
    )
    return FactResult(item=item, action="NOOP", reason=reason)


def _audit_write(
    space: Space,
    item: MemoryItem,
    action: str,
    superseded: list[int],
    decision: resolve.Decision,
    prov: Provenance,
) -> None:
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


def link_item(*, space: Space, item: MemoryItem) -> int:
    """Step 5: the item's subject -predicate-> object edge (and entities)."""
    if not (item.subject and item.predicate and item.object) or not item.is_live:
        return 0
    if identity.learn(space, item):
        return 0  # a name of the user's: an alias, not an edge to another entity
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
    return FactResult(
        item=item, action="ADD", reason="quarantined", quarantined=True, reasons=list(reasons)
    )


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
    result = screen_fact(c.text, kind=c.kind, importance=c.importance)
    reasons = list(result.reasons) if result.flagged else []
    c.text = result.text
    for name in ("subject", "object"):
        part = screen(getattr(c, name))
        setattr(c, name, part.text)
        if part.flagged:
            reasons += [r for r in part.reasons if r not in reasons]
    return c, reasons


def _quarantined(
    space: Space, candidate: Candidate, reasons: list[str], prov: Provenance, *, dry_run: bool
) -> FactResult:
    if dry_run:
        return FactResult(
            item=None,
            action="QUARANTINE",
            reason=", ".join(reasons),
            quarantined=True,
            reasons=list(reasons),
        )
    with transaction.atomic():
        return quarantine(space=space, candidate=candidate, reasons=reasons, prov=prov)


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
    stated_at: datetime | None = None,
    dry_run: bool = False,
    judge: bool = False,
) -> FactResult:
    """Store one fact through screening, resolution and the graph.

    With `judge` (the explicit write paths: POST /memory/facts, the save
    tools) an uncertain case goes to the write judge, as in the pipeline,
    before the write transaction; never for a caller that may hold one.

    A dated write (`valid_from`) takes its place among the values of its
    slot by that date, like a turn said then; an undated one was said now.
    `stated_at` overrides that (a curator's correction is said now, whatever
    the date the fact became true). With dry_run, answer the resolver's plan
    and write nothing (a flagged text plans QUARANTINE)."""
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
    prov = Provenance(
        source=source,
        actor=actor,
        session=session,
        turn_refs=tuple(turn_refs),
        said_at=stated_at or valid_from,
    )
    if flagged:
        return _quarantined(space, candidate, flagged, prov, dry_run=dry_run)
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
        if candidate.kind != kind:
            # The text turned out to be a standing instruction or preference:
            # it gets the strict screen that kind of fact gets.
            late = screen_fact(candidate.text, kind=candidate.kind, importance=importance)
            if late.flagged:
                return _quarantined(space, candidate, late.reasons, prov, dry_run=dry_run)
    candidate = identity.resolve(space, candidate)
    neighbours = retrieve.similar(space=space, candidate=candidate)
    decision = _decide(space, candidate, neighbours, judge=judge)
    if dry_run:
        # The plan: apply the decision exactly as a write would (single-valued
        # chains, history placement), then roll it back. on_commit work
        # (embedding, mirrors) is discarded with the savepoint.
        with transaction.atomic():
            lock_space_writes(space)
            planned = apply(space=space, decision=decision, prov=prov)
            transaction.set_rollback(True)
        return FactResult(
            item=None,
            action=planned.action,
            superseded=list(planned.superseded),
            reason=planned.reason,
        )
    with transaction.atomic():
        lock_space_writes(space)
        result = apply(space=space, decision=decision, prov=prov)
        _record_adjudication(decision, result)
        if result.item is not None and result.action in ("ADD", "UPDATE"):
            link_item(space=space, item=result.item)
            result.core_changed = core_patch.propose(space=space, item=result.item)
    if result.item is not None and result.action in ("ADD", "UPDATE", "DEFER"):
        item_id = result.item.pk
        transaction.on_commit(lambda: embed_later(space_id=space.pk, item_ids=[item_id]))
        provider_mirror.after_commit(space_name=space.name, item_ids=[item_id])
    return result


def _decide(
    space: Space, candidate: Candidate, neighbours: list[MemoryItem], *, judge: bool
) -> resolve.Decision:
    """The rules' decision, and with `judge` the write judge's on an
    uncertain case (the same judge.adjudicate the pipeline asks; it falls
    back to the rules itself, the reason on the unsaved Adjudication)."""
    decision = resolve.decide(candidate, neighbours)
    if not judge:
        return decision
    from memory.services.pipeline import judge as write_judge

    return write_judge.adjudicate(space=space, decisions=[decision], neighbours=[neighbours])[0]


def _record_adjudication(decision: resolve.Decision, result: FactResult) -> None:
    """Save the judge's record with what was written (apply may have turned
    it into another action), in the write transaction."""
    record = decision.adjudication
    if record is None:
        return
    record.item = result.item
    record.action = result.action
    record.save()


def save_derived(
    *,
    space: Space,
    text: str,
    kind: str,
    subject: str = "",
    importance: float = 0.5,
    source: str,
    actor: str,
    metadata: dict[str, object] | None = None,
) -> FactResult:
    """Store an item distilled from facts already stored (an insight from its
    evidence). Screened like any write, but neither run through the rule
    extractor nor resolved against its neighbours: its text restates its
    evidence on purpose, so resolution would take it for a duplicate of one
    of them or, worse, let it supersede one ("Anna lives in Lyon and works
    as a teacher" read as a new lives_in fact). An exact live duplicate of
    the same kind is returned as a NOOP."""
    candidate, flagged = _screened(
        Candidate(text=text, kind=kind, subject=subject, importance=importance)
    )
    prov = Provenance(source=source, actor=actor, enrol=False)
    with transaction.atomic():
        if flagged:
            return quarantine(space=space, candidate=candidate, reasons=flagged, prov=prov)
        dup = (
            live_items(space)
            .filter(content_hash=content_hash(candidate.text), kind=candidate.kind)
            .first()
        )
        if dup is not None:
            return FactResult(item=dup, action="NOOP", reason="exact duplicate")
        item = _create(
            space=space, candidate=candidate, disposition="ADD", prov=prov, metadata=metadata
        )
        audit.record(
            space=space,
            action="add",
            target_type="item",
            target_id=item.pk,
            actor=actor,
            text=item.text[:200],
            reason="derived",
        )
    item_id = item.pk
    transaction.on_commit(lambda: embed_later(space_id=space.pk, item_ids=[item_id]))
    return FactResult(item=item, action="ADD", reason="derived")
