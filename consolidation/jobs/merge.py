"""Step 3: merge near-duplicate live facts and settle contradictions.

Duplicates are facts of one kind with the same subject/predicate/object, or
whose content words overlap above CONSOLIDATE_MERGE_JACCARD, or whose vectors
under the configured model are closer than CONSOLIDATE_MERGE_COSINE. Each
cluster collapses into its most detailed member (rewritten denser by the LLM
when one is available) with the frequencies summed; the others are
superseded by it, never deleted.

A contradiction is two live facts with the same subject and a functional
predicate (one value at a time) but different objects: as on the write path,
the newer value supersedes the older.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime

import numpy as np
from django.db import transaction
from django.db.models import F
from pydantic import BaseModel, Field

from consolidation.jobs._common import (
    ACTOR,
    DATA_NOTE,
    LlmSkipped,
    StepContext,
    StepResult,
    as_data,
    cfg,
    jaccard,
    norm,
    token_set,
)
from memory.models import MemoryItem, MemoryVector
from memory.selectors import live_items
from memory.services import audit
from memory.services.pipeline.candidates import FUNCTIONAL_PREDICATES
from memory.services.recall import termstats


class MergeAnswer(BaseModel):
    text: str = Field(max_length=600)


SYSTEM = (
    "These memory entries say the same thing. Rewrite them as ONE dense, self-contained "
    'sentence keeping every distinct detail. Answer as JSON {"text": str}. ' + DATA_NOTE
)

MERGEABLE = [
    MemoryItem.Kind.FACT,
    MemoryItem.Kind.PREFERENCE,
    MemoryItem.Kind.EVENT,
    MemoryItem.Kind.INSTRUCTION,
]


class _Union:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _vectors(space_id: int, ids: list[int]) -> dict[int, np.ndarray]:
    """Unit vectors of these items under the configured model only: vectors
    of another model live in another space and comparing them is meaningless."""
    from memory import embeddings

    if not embeddings.enabled() or not ids:
        return {}
    out: dict[int, np.ndarray] = {}
    rows = MemoryVector.objects.filter(
        space_id=space_id, item_id__in=ids, model=embeddings.model_name()
    )
    for item_id, dim, blob in rows.values_list("item_id", "dim", "vec"):
        vec = embeddings.from_blob(blob, dim).astype(np.float32)
        n = float(np.linalg.norm(vec))
        if n > 0:
            out[item_id] = vec / n
    return out


def clusters(items: list[MemoryItem]) -> list[list[MemoryItem]]:
    by_id = {i.pk: i for i in items}
    uf = _Union()
    threshold = cfg("CONSOLIDATE_MERGE_JACCARD")
    # same s/p/o
    spo: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    for i in items:
        if i.subject and i.predicate and i.object:
            spo[(i.kind, norm(i.subject), norm(i.predicate), norm(i.object))].append(i.pk)
    for group in spo.values():
        for other in group[1:]:
            uf.join(group[0], other)
    # text overlap: candidates share one of an item's rarest words, then Jaccard
    sets = {i.pk: token_set(i.text) for i in items}
    index: dict[str, list[int]] = defaultdict(list)
    for pk, words in sets.items():
        for w in words:
            index[w].append(pk)
    for pk, words in sets.items():
        if not words:
            continue
        rare = sorted(words, key=lambda w: len(index[w]))[:3]
        seen: set[int] = set()
        for w in rare:
            for other in index[w]:
                if other <= pk or other in seen:
                    continue
                seen.add(other)
                if by_id[other].kind == by_id[pk].kind and (
                    jaccard(words, sets[other]) >= threshold
                ):
                    uf.join(pk, other)
    # vectors
    vecs = _vectors(items[0].space_id, list(by_id)) if items else {}
    if len(vecs) > 1:
        ids = list(vecs)
        matrix = np.stack([vecs[i] for i in ids])
        sims = matrix @ matrix.T
        cosine = cfg("CONSOLIDATE_MERGE_COSINE")
        for a, b in zip(*np.nonzero(np.triu(sims, k=1) >= cosine), strict=False):
            if by_id[ids[a]].kind == by_id[ids[b]].kind:
                uf.join(ids[a], ids[b])
    groups: dict[int, list[MemoryItem]] = defaultdict(list)
    for i in items:
        groups[uf.find(i.pk)].append(i)
    return [g for g in groups.values() if len(g) > 1]


def _survivor(group: list[MemoryItem]) -> MemoryItem:
    return max(group, key=lambda i: (len(i.text), i.importance, i.frequency, i.pk))


def _merge(ctx: StepContext, group: list[MemoryItem], result: StepResult) -> None:
    from memory.services.facts import supersede

    keep = _survivor(group)
    others = [i for i in group if i.pk != keep.pk]
    denser = ""
    try:
        answer = ctx.llm_json(
            purpose="merge", system=SYSTEM, user=as_data(i.text for i in group), schema=MergeAnswer
        )
        denser = answer.text.strip()
    except LlmSkipped:
        pass
    with transaction.atomic():
        # Re-read inside the transaction: a write may have retired one meanwhile.
        live_ids = set(
            live_items(ctx.space).filter(pk__in=[i.pk for i in group]).values_list("pk", flat=True)
        )
        if keep.pk not in live_ids:
            return
        others = [o for o in others if o.pk in live_ids]
        if not others:
            return
        refs = list(dict.fromkeys([r for i in group for r in (i.source_turn_refs or [])]))[:50]
        update: dict[str, object] = {
            "frequency": F("frequency") + sum(o.frequency for o in others),
            "importance": max(i.importance for i in group),
            "last_seen": max(i.last_seen for i in group),
            "source_turn_refs": refs,
            "metadata": {**(keep.metadata or {}), "merged_from": sorted(o.pk for o in others)},
        }
        if denser and denser != keep.text:
            update["text"] = denser
        MemoryItem.objects.filter(pk=keep.pk).update(**update)
        if "text" in update:
            # Recall's postings hold the fact's old words until rebuilt.
            termstats.rewritten(ctx.space.pk)
        keep.refresh_from_db()
        others = [o for o in others if supersede(old=o, new=keep, actor=ACTOR)]
        audit.record(
            space=ctx.space,
            action="merge",
            target_type="item",
            target_id=keep.pk,
            actor=ACTOR,
            merged=[o.pk for o in others],
            rewritten=bool(update.get("text")),
        )
    result.add("merged", len(others))
    result.add("clusters")


def _when(item: MemoryItem) -> datetime:
    return item.valid_from or item.created_at


def functional(predicate: str) -> bool:
    """Same rule as the write path: only predicates that hold one value at a
    time ("lives_in", "favorite_*") can be contradicted; "likes" tea and
    "likes" hiking are both true."""
    p = re.sub(r"[^a-z0-9_]+", "_", predicate.strip().lower()).strip("_")
    return p in FUNCTIONAL_PREDICATES or p.startswith("favorite_")


def _contradictions(ctx: StepContext, result: StepResult) -> None:
    from memory.services.facts import supersede

    groups: dict[tuple[str, str], list[MemoryItem]] = defaultdict(list)
    rows = (
        live_items(ctx.space)
        .filter(kind__in=MERGEABLE)
        .exclude(subject="")
        .exclude(predicate="")
        .exclude(object="")
    )
    for item in rows:
        if functional(item.predicate):
            groups[(norm(item.subject), norm(item.predicate))].append(item)
    for group in groups.values():
        objects = {norm(i.object) for i in group}
        if len(objects) < 2:
            continue
        group.sort(key=lambda i: (_when(i), i.created_at, i.pk))
        newest = group[-1]
        with transaction.atomic():
            for old in group[:-1]:
                if norm(old.object) == norm(newest.object):
                    continue  # a duplicate, not a contradiction: the merge pass took it
                if not live_items(ctx.space).filter(pk=old.pk).exists():
                    continue
                if supersede(old=old, new=newest, actor=ACTOR):
                    result.add("contradictions")


def run(ctx: StepContext) -> StepResult:
    result = StepResult(counts={"merged": 0, "clusters": 0, "contradictions": 0})
    items = list(live_items(ctx.space).filter(kind__in=MERGEABLE).order_by("pk"))
    for group in clusters(items):
        _merge(ctx, group, result)
    _contradictions(ctx, result)
    return result
