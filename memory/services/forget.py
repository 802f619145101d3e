"""Forgetting that is real.

- Soft (the default): matching facts get status "forgotten": out of recall and
  context, still visible to curators and restorable. Their graph edges close
  (restore reopens exactly those), and their lines leave the core blocks
  through a normal new version, so that too is undoable.
- Hard: the rows are deleted, with everything derived from them: FTS entries
  (the FTS5 delete triggers; PostgreSQL indexes the row itself), vectors
  (cascade), graph edges only they supported, entities left with no edge and
  no remaining fact, beliefs left with no evidence, the text in audit details,
  and the lines in core blocks, their version history and the Markdown mirror.
  A hard forget by query also deletes the conversation turns and summaries
  that contain the query, so search_conversations cannot bring it back.
- Everything: every row of the space in every table that belongs to a space,
  and its mirror directory; the space and its API keys stay so the agent can
  carry on. Needs the space name typed as confirmation. One audit record says
  that it happened and how many rows went, nothing of what they held.

After a hard forget or a wipe the database is made to give the bytes back
(memory.services.reclaim) and every place that could still hold the text is
searched (memory.services.forget_verify); the answer carries that report.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from memory.errors import Invalid, NotFound
from memory.models import (
    Adjudication,
    AuditEvent,
    Belief,
    CoreBlock,
    CoreBlockVersion,
    Entity,
    EntityAlias,
    MemoryItem,
    PalaceEntry,
    Relation,
    SessionSummary,
    Space,
    Turn,
)
from memory.search import Target, query_terms, search
from memory.services import audit, forget_verify, reclaim
from memory.services.graph import revive_relations, suspend_relations
from memory.services.palace import slots as palace_slots

log = logging.getLogger(__name__)

# How many facts one query forget considers; a query that matches more is too
# broad to act on blindly.
QUERY_LIMIT = 200
_SCRUBBED = {"scrubbed": True}
_SCRUBBED_LOG = "[forgotten]"


@dataclass(frozen=True)
class Forgotten:
    """What a forget did: how many rows, and for a hard forget or a wipe the
    verification report (forget_verify.Report.as_dict())."""

    count: int
    verification: dict[str, Any] | None = None


def _matches_all(text: str, terms: list[str]) -> bool:
    low = text.casefold()
    return all(t.casefold() in low for t in terms)


def items_for_query(*, space: Space, query: str, include_inactive: bool) -> list[MemoryItem]:
    """Facts that contain every word of `query` (stopwords aside). Full-text
    search finds the candidates; requiring every term keeps "forget my sister's
    address" from also forgetting everything about addresses."""
    terms = query_terms(query)
    if not terms:
        raise Invalid("query: needs at least one word to match")
    hits = search(
        "item", space_id=space.pk, query=query, limit=QUERY_LIMIT, live_only=not include_inactive
    )
    rows = MemoryItem.objects.filter(space=space, pk__in=[h.id for h in hits])
    if not include_inactive:
        rows = rows.filter(status=MemoryItem.Status.ACTIVE)
    return [
        item
        for item in rows
        if _matches_all(" ".join((item.text, item.subject, item.object)), terms)
    ]


def _item(space: Space, item_id: int | str) -> MemoryItem:
    try:
        pk = int(item_id)
    except (TypeError, ValueError):
        raise Invalid(f"item_id: {item_id!r} is not a memory item id") from None
    item = MemoryItem.objects.filter(space=space, pk=pk).first()
    if item is None:
        raise NotFound(f"memory item {item_id} not found")
    return item


def _history_chain(item: MemoryItem) -> list[MemoryItem]:
    """The item and every older version it superseded, transitively."""
    chain = [item]
    frontier = [item.pk]
    seen = {item.pk}
    while frontier:
        older = list(MemoryItem.objects.filter(superseded_by_id__in=frontier).exclude(pk__in=seen))
        frontier = [o.pk for o in older]
        seen.update(frontier)
        chain += older
    return chain


def _remove_lines_from_core(*, space: Space, texts: Iterable[str], actor: str, hard: bool) -> None:
    from memory.services import core, mirror

    lines = {" ".join(t.split()) for t in texts if t.strip()}
    if not lines:
        return
    for block in CoreBlock.objects.filter(space=space):
        block.space = space
        kept = [line for line in core.entries(block.text) if line not in lines]
        if len(kept) != len(core.entries(block.text)):
            block = core.set_text(
                space=space,
                label=block.label,
                text="\n".join(kept),
                author=actor,
                reason="forget",
            )
        if hard:
            # Forget outranks "history is never rewritten": the text leaves
            # old versions too, or undo would bring it back.
            for version in CoreBlockVersion.objects.filter(block=block):
                vlines = version.text.split("\n")
                clean = [line for line in vlines if " ".join(line.split()) not in lines]
                if clean != vlines:
                    CoreBlockVersion.objects.filter(pk=version.pk).update(text="\n".join(clean))
            mirror.write_block(block=block)


def _scrub_audit(*, space: Space, item_ids: set[int], texts: list[str]) -> int:
    """Empty the details of the audit events about the forgotten items or
    quoting any of `texts`; the database finds them (a scan of every event
    in Python took seconds in a space with a long history)."""
    needles = [t for t in texts if len(t) >= 3]
    events = AuditEvent.objects.filter(space=space)
    doomed = set(
        events.filter(target_type="item", target_id__in=[str(i) for i in item_ids]).values_list(
            "pk", flat=True
        )
    )
    if needles:
        doomed |= forget_verify.space_rows_containing(
            AuditEvent, space=space, needles=needles, columns=["detail"]
        )
    if not doomed:
        return 0
    return events.filter(pk__in=doomed).exclude(detail=_SCRUBBED).update(detail=_SCRUBBED)


def _scrub_admin_log(
    texts: list[str], *, model: type[models.Model] | None = None, ids: Iterable[int] = ()
) -> int:
    """The admin's change log names objects by their text (str(obj), cut to
    200 characters); a forgotten fact edited there must not live on in it.
    Entries of the deleted rows (`model`, `ids`) go whatever they say."""
    if not apps.is_installed("django.contrib.admin"):
        return 0
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    scrubbed = 0
    keys = [str(i) for i in ids]
    if model is not None and keys:
        kind = ContentType.objects.get_for_model(model)
        scrubbed += LogEntry.objects.filter(content_type=kind, object_id__in=keys).update(
            object_repr=_SCRUBBED_LOG, change_message=_SCRUBBED_LOG
        )
    needles = forget_verify.needles_of(texts)
    for needle in needles:
        scrubbed += LogEntry.objects.filter(object_repr__contains=needle).update(
            object_repr=_SCRUBBED_LOG
        )
        scrubbed += LogEntry.objects.filter(change_message__contains=needle).update(
            change_message=_SCRUBBED_LOG
        )
    return scrubbed


def _orphan_entities(*, space: Space, candidates: set[int]) -> list[int]:
    """Of `candidates`, the entities no edge and no remaining fact refer to."""
    from memory.services.graph import normalize

    if not candidates:
        return []
    linked = set(
        Relation.objects.filter(Q(src_id__in=candidates) | Q(dst_id__in=candidates))
        .values_list("src_id", "dst_id")
        .iterator()
    )
    still_linked = {e for pair in linked for e in pair}
    orphans = [e for e in candidates if e not in still_linked]
    if not orphans:
        return []
    norms: dict[int, set[str]] = {}
    for entity_id, norm in EntityAlias.objects.filter(entity_id__in=orphans).values_list(
        "entity_id", "norm"
    ):
        norms.setdefault(entity_id, set()).add(norm)
    for entity_id, norm in Entity.objects.filter(pk__in=orphans).values_list("id", "norm"):
        norms.setdefault(entity_id, set()).add(norm)
    mentioned: set[str] = set()
    wanted = {n for ns in norms.values() for n in ns}
    for subject, obj in MemoryItem.objects.filter(space=space).values_list("subject", "object"):
        for value in (subject, obj):
            n = normalize(value)
            if n in wanted:
                mentioned.add(n)
    return [e for e in orphans if not (norms.get(e, set()) & mentioned)]


def _hard_delete_items(*, space: Space, items: list[MemoryItem], actor: str) -> int:
    from memory.services.graph import normalize

    ids = {i.pk for i in items}
    texts = [i.text for i in items]
    # The object is the private part of a fact ("lives in <where>"); audit
    # details quoting it alone are scrubbed too.
    needles = texts + [i.object for i in items if len(i.object) >= 4]
    with transaction.atomic():
        relations = Relation.objects.filter(space=space, item_id__in=ids)
        entity_ids = {e for pair in relations.values_list("src_id", "dst_id") for e in pair}
        names = {normalize(v) for i in items for v in (i.subject, i.object) if v}
        names.discard("")
        if names:
            entity_ids |= set(
                EntityAlias.objects.filter(space=space, norm__in=names).values_list(
                    "entity_id", flat=True
                )
            )
        belief_ids = set(
            Belief.evidence.through.objects.filter(memoryitem_id__in=ids).values_list(
                "belief_id", flat=True
            )
        )
        relations.delete()
        # Adjudications of these items go with them (CASCADE); one quoting a
        # forgotten text under another item (a merge) goes too.
        Adjudication.objects.filter(space=space, candidate_text__in=texts).delete()
        # The slot stays taken (never reused) but keeps nothing of the entry:
        # its placard is a cue made from the text.
        PalaceEntry.objects.filter(space=space, item_id__in=ids).update(
            placard="", topic="", due_at=None
        )
        MemoryItem.objects.filter(space=space, pk__in=ids).delete()
        Belief.objects.filter(pk__in=belief_ids, evidence=None).delete()
        Entity.objects.filter(pk__in=_orphan_entities(space=space, candidates=entity_ids)).delete()
        _scrub_audit(space=space, item_ids=ids, texts=needles)
        _scrub_admin_log(texts, model=MemoryItem, ids=ids)
        _remove_lines_from_core(space=space, texts=texts, actor=actor, hard=True)
        audit.record(
            space=space,
            action="forget",
            target_type="item",
            actor=actor,
            hard=True,
            count=len(ids),
            ids=sorted(ids),
        )
    return len(ids)


def _hard_delete_conversation(
    *, space: Space, query: str, deleted: dict[Target, set[int]], texts: list[str]
) -> int:
    """Turns and summaries containing every word of the query. Their ids go
    into `deleted` and their texts into `texts`, for the verification."""
    terms = query_terms(query)
    removed = 0
    pairs: list[tuple[Target, type[Turn] | type[SessionSummary]]] = [
        ("turn", Turn),
        ("summary", SessionSummary),
    ]
    for target, model in pairs:
        hits = search(target, space_id=space.pk, query=query, limit=QUERY_LIMIT, live_only=False)
        rows = model.objects.filter(space=space, pk__in=[h.id for h in hits])
        doomed = {r.pk: r.text for r in rows if _matches_all(r.text, terms)}
        if doomed:
            with transaction.atomic():
                removed += model.objects.filter(pk__in=doomed).delete()[1].get(model._meta.label, 0)
                _scrub_audit(space=space, item_ids=set(), texts=list(doomed.values()))
                _scrub_admin_log(list(doomed.values()), model=model, ids=doomed)
            deleted.setdefault(target, set()).update(doomed)
            texts += doomed.values()
    return removed


def core_lines_for_query(*, space: Space, query: str) -> list[str]:
    """Lines of the space's core blocks, current or in their history, that
    contain every word of the query."""
    terms = query_terms(query)
    found: set[str] = set()
    blocks = CoreBlock.objects.filter(space=space).values_list("text", flat=True)
    versions = CoreBlockVersion.objects.filter(block__space=space).values_list("text", flat=True)
    for text in [*blocks, *versions]:
        found.update(
            " ".join(line.split()) for line in text.split("\n") if _matches_all(line, terms)
        )
    found.discard("")
    return sorted(found)


def _space_models() -> list[type[models.Model]]:
    """Every model with a `space` foreign key, except the API keys that let the
    agent keep using the emptied space (found by introspection, so a model
    added later is wiped too)."""
    return [m for m in forget_verify.space_models() if m._meta.label != "memory.ApiKey"]


def _wipe_space(*, space: Space, actor: str) -> Forgotten:
    from memory.search._fts import TABLES
    from memory.services import mirror

    total = 0
    per_table: dict[str, int] = {}
    with transaction.atomic():
        # Leaves first so cascades have little left to collect.
        order: list[type[models.Model]] = [
            Relation,
            EntityAlias,
            Belief,
            Entity,
            MemoryItem,
            SessionSummary,
            Turn,
        ]
        rest = [m for m in _space_models() if m not in order and m is not CoreBlock]
        doomed: list[type[models.Model]] = [*order, *rest, CoreBlock]
        for model in doomed:
            n, by_label = model._default_manager.filter(space=space).delete()
            total += n
            for label, count in by_label.items():
                if count:
                    per_table[label] = per_table.get(label, 0) + count
        Space.objects.filter(pk=space.pk).update(last_activity_at=None, last_consolidated_at=None)
        # Written after the deletes: the one row the space keeps, with counts
        # only, so an operator can see that (and when, and by whom) it was wiped.
        event = audit.record(
            space=space,
            action="wipe",
            target_type="space",
            target_id=space.pk,
            actor=actor,
            rows=total,
            tables=per_table,
        )
    mirror.remove_space(space=space)
    forget_verify.drop_caches(space)
    tables = [m._meta.db_table for m in forget_verify.space_models()]
    storage = reclaim.after_wipe(fts_tables=[fts for fts, _ in TABLES.values()], tables=tables)
    report = forget_verify.verify_wipe(space=space, keep_audit_id=event.pk, storage=storage)
    log.warning("space %s wiped by %s: %s rows deleted", space.name, actor, total)
    if not report.verified:
        log.error("wipe of space %s left rows behind: %s", space.name, report.as_dict())
    return Forgotten(count=total, verification=report.as_dict())


def _hard_forget(
    *, space: Space, items: list[MemoryItem], query: str | None, actor: str
) -> Forgotten:
    from memory.search._fts import TABLES

    deleted: dict[Target, set[int]] = {"item": {i.pk for i in items}}
    texts = [i.text for i in items]
    count = _hard_delete_items(space=space, items=items, actor=actor) if items else 0
    if query is not None:
        count += _hard_delete_conversation(space=space, query=query, deleted=deleted, texts=texts)
        # A core line the agent wrote by hand is not a fact, but saying
        # "forget X" means it too.
        lines = core_lines_for_query(space=space, query=query)
        if lines:
            with transaction.atomic():
                _remove_lines_from_core(space=space, texts=lines, actor=actor, hard=True)
                _scrub_audit(space=space, item_ids=set(), texts=lines)
                _scrub_admin_log(lines)
            texts += lines
    if items or query is not None:
        from memory.services import mirror

        mirror.scrub_rejected(space=space, texts=texts)
    forget_verify.drop_caches(space)
    fts_tables = [TABLES[t][0] for t, ids in deleted.items() if ids and t in TABLES]
    tables = [m._meta.db_table for m in forget_verify.space_models()]
    storage = reclaim.after_hard_forget(
        fts_tables=fts_tables, tables=[*tables, CoreBlockVersion._meta.db_table]
    )
    report = forget_verify.verify(
        space=space, texts=texts, deleted=deleted, query=query, storage=storage
    )
    if not report.verified:
        found = [c.as_dict() for c in report.checks if c.found]
        log.error("hard forget in space %s left traces: %s", space.name, found)
    return Forgotten(count=count, verification=report.as_dict())


def forget(
    *,
    space: Space,
    item_id: int | str | None = None,
    query: str | None = None,
    everything: bool = False,
    confirm: str | None = None,
    hard: bool = False,
    actor: str = "api",
) -> int:
    """Forget one fact, the facts matching a query, or the whole space; returns
    how many rows were forgotten (facts; with hard+query also turns and
    summaries; with everything, every deleted row)."""
    return forget_with_report(
        space=space,
        item_id=item_id,
        query=query,
        everything=everything,
        confirm=confirm,
        hard=hard,
        actor=actor,
    ).count


def forget_with_report(
    *,
    space: Space,
    item_id: int | str | None = None,
    query: str | None = None,
    everything: bool = False,
    confirm: str | None = None,
    hard: bool = False,
    actor: str = "api",
) -> Forgotten:
    """forget(), with the verification report of a hard forget or a wipe."""
    chosen = sum([item_id is not None, bool(query and query.strip()), everything])
    if chosen != 1:
        raise Invalid("give exactly one of item_id, query or everything")
    if everything:
        if confirm != space.name:
            raise Invalid("confirm: type the space name exactly to wipe all of its memory")
        return _wipe_space(space=space, actor=actor)

    if item_id is not None:
        item = _item(space, item_id)
        items = _history_chain(item) if hard else [item]
    else:
        assert query is not None
        items = items_for_query(space=space, query=query, include_inactive=hard)

    if hard:
        return _hard_forget(space=space, items=items, query=query, actor=actor)

    items = [i for i in items if i.status != MemoryItem.Status.FORGOTTEN]
    if not items:
        return Forgotten(count=0)
    ids = [i.pk for i in items]
    with transaction.atomic():
        MemoryItem.objects.filter(pk__in=ids).update(status=MemoryItem.Status.FORGOTTEN)
        # The fact's edges leave the graph with it; restore() reopens them.
        suspend_relations(item_ids=ids)
        for item in items:
            audit.record(
                space=space,
                action="forget",
                target_type="item",
                target_id=item.pk,
                actor=actor,
                hard=False,
            )
        _remove_lines_from_core(space=space, texts=[i.text for i in items], actor=actor, hard=False)
    return Forgotten(count=len(ids))


def bring_back(*, item: MemoryItem, actor: str, archived_only: bool = False) -> bool:
    """Return a soft-forgotten or archived fact to recall, with the graph
    edges that left with it. An archived fact counts as seen now, or the next
    decay pass would archive it again at once. False when the item was in
    neither state (or, with archived_only, not archived)."""
    now = timezone.now()
    rows = MemoryItem.objects.filter(pk=item.pk)
    with transaction.atomic():
        done = rows.filter(status=MemoryItem.Status.ARCHIVED).update(
            status=MemoryItem.Status.ACTIVE, last_seen=now
        )
        if not done and not archived_only:
            done = rows.filter(status=MemoryItem.Status.FORGOTTEN).update(
                status=MemoryItem.Status.ACTIVE
            )
        if not done:
            return False
        item.refresh_from_db(fields=["status", "last_seen", "metadata", "expired_at"])
        reopened = revive_relations(item=item)
        if not PalaceEntry.objects.filter(item=item).exists():
            # Forgotten or archived before the palace was built: it gets
            # its slot now it is live again (not enrolled: nothing new).
            palace_slots.place_item(item, enrol=False)
        audit.record(
            space=item.space_id,
            action="restore",
            target_type="item",
            target_id=item.pk,
            actor=actor,
            at=now.isoformat(),
            relations=reopened,
        )
    return True


def restore(*, space: Space, item_id: int | str, actor: str = "api") -> MemoryItem:
    """Undo a soft forget or a decay archive."""
    item = _item(space, item_id)
    if not bring_back(item=item, actor=actor):
        raise Invalid(f"item {item.pk} is neither forgotten nor archived")
    return item
