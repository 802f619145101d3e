"""Step 5: reflect. Distil the period's facts into a few insights and keep
beliefs honest with their evidence.

- Form: facts about one entity, at least REFLECT_MIN_EVIDENCE of them, become
  a belief listing them as evidence (proof_count = how many), projected into
  recall as one `insight` item. Facts gather by entity, not by subject string
  (_entities.py: "Anna", "anna" and "Anna K." are one person, the user is the
  user under any of their names). The LLM words it when available; otherwise
  it is a few sentences made from the strongest facts' own wording
  (_phrasing.py): "Anna lives in Lyon, works as a teacher and has a dog
  named Max."
- Near-identical beliefs (word overlap >= REFLECT_BELIEF_MERGE_JACCARD) merge
  into the older one; the other is closed with a "merged" verdict.
- New evidence near a belief (its subject's facts, or facts overlapping its
  words) marks it stale; so does evidence that has been superseded.
- A stale belief is re-judged: refute when most of its evidence is no longer
  live, refine when new evidence adds to it, still when nothing changed.
  Refuted beliefs keep their evidence for audit and their insight item is
  invalidated so it is never recalled or injected.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel, Field

from consolidation.jobs import _phrasing
from consolidation.jobs._common import (
    ACTOR,
    DATA_NOTE,
    LlmSkipped,
    StepContext,
    StepResult,
    as_data,
    cfg,
    jaccard,
    space_now,
    token_set,
)
from consolidation.jobs._entities import Resolver, Subject
from memory.models import Belief, MemoryItem
from memory.selectors import live_items
from memory.services import audit

EVIDENCE_KINDS = [
    MemoryItem.Kind.FACT,
    MemoryItem.Kind.PREFERENCE,
    MemoryItem.Kind.EVENT,
    MemoryItem.Kind.INSTRUCTION,
]


class InsightAnswer(BaseModel):
    insight: str = Field(max_length=400)


FORM_SYSTEM = (
    "From these memories about one subject, write ONE higher-level insight (a pattern, "
    "preference or tendency they show together), a single sentence that does not just "
    'repeat one memory. Answer as JSON {"insight": str}. ' + DATA_NOTE
)


class VerdictAnswer(BaseModel):
    verdict: Literal["refine", "still", "refute"]
    text: str = Field(default="", max_length=400)


JUDGE_SYSTEM = (
    "A belief was distilled from evidence; new evidence arrived. Judge it: 'still' if the "
    "belief stands unchanged, 'refine' with a corrected text if it needs adjusting, "
    "'refute' if the evidence now contradicts it. Answer as JSON "
    '{"verdict": "refine"|"still"|"refute", "text": str}. ' + DATA_NOTE
)


def _history(belief: Belief, verdict: str, **note: Any) -> None:
    belief.history = [
        *(belief.history or []),
        {"verdict": verdict, "at": timezone.now().isoformat(), **note},
    ]


def _insight_item(belief: Belief) -> MemoryItem | None:
    return (
        live_items(belief.space)
        .filter(kind=MemoryItem.Kind.INSIGHT, metadata__belief_id=belief.pk)
        .first()
    )


def _deterministic_text(subject: Subject, facts: list[MemoryItem]) -> str:
    text = _phrasing.describe(
        display=subject.display, lead=subject.lead(), items=facts, user=subject.is_user
    )
    if text:
        return text
    # Nothing could be phrased: the strongest fact's own words stand for the rest.
    strongest = max(facts, key=lambda f: (f.importance, f.frequency, f.pk))
    return strongest.text.strip()


Groups = dict[str, tuple[Subject, list[MemoryItem]]]


def _groups(ctx: StepContext) -> tuple[Resolver, Groups]:
    """The live evidence of the space, by entity (see _entities.py)."""
    resolver = Resolver(ctx.space)
    groups: Groups = {}
    facts = live_items(ctx.space).filter(kind__in=EVIDENCE_KINDS).exclude(subject="").order_by("pk")
    for f in facts:
        subject = resolver(f.subject)
        if subject is None:
            continue
        groups.setdefault(subject.key, (subject, []))[1].append(f)
    return resolver, groups


def _subject_of(belief: Belief) -> str:
    for entry in reversed(belief.history or []):
        if entry.get("subject"):
            return str(entry["subject"])
    return ""


def _project(ctx: StepContext, belief: Belief, subject: Subject | None) -> MemoryItem | None:
    """Write (or rewrite) the belief's insight item, the form recall sees.
    Returns the item when a new one was written."""
    from memory.services.facts import save_derived, supersede

    evidence_ids = sorted(belief.evidence.values_list("pk", flat=True))
    old = _insight_item(belief)
    if old is not None and old.text == belief.text:
        if (old.metadata or {}).get("evidence") != evidence_ids:
            meta = {**(old.metadata or {}), "evidence": evidence_ids}
            MemoryItem.objects.filter(pk=old.pk).update(metadata=meta)
        return None
    fact = save_derived(
        space=ctx.space,
        text=belief.text,
        subject=subject.stored_subject if subject is not None else (old.subject if old else ""),
        kind=MemoryItem.Kind.INSIGHT,
        importance=0.7,
        source=ACTOR,
        actor=ACTOR,
        # The evidence links travel with the insight so recall and the UI can show them.
        metadata={"belief_id": belief.pk, "evidence": evidence_ids},
    )
    item = fact.item
    if item is None or fact.action != "ADD" or item.screen_status != MemoryItem.Screen.OK:
        return None  # a duplicate of another insight, or quarantined: nothing recall sees
    if old is not None and old.pk != item.pk:
        supersede(old=old, new=item, actor=ACTOR)
    return item


def _form(ctx: StepContext, result: StepResult, resolver: Resolver, groups: Groups) -> None:
    now = space_now(ctx.space)
    period_start = now - timedelta(days=cfg("REFLECT_PERIOD_DAYS"))
    minimum = cfg("REFLECT_MIN_EVIDENCE")
    chosen = [
        (key, subject, group)
        for key, (subject, group) in groups.items()
        if len(group) >= minimum
        and any((f.valid_from or f.last_seen) >= period_start for f in group)
    ]
    chosen.sort(key=lambda g: (len(g[2]), g[0]), reverse=True)
    # Beliefs formed before subjects were resolved through the graph carry
    # the raw normalized subject; resolving it finds the same entity.
    existing: dict[str, Belief] = {}
    for b in Belief.objects.filter(space=ctx.space).exclude(status=Belief.Status.REFUTED):
        known = resolver(_subject_of(b)) if _subject_of(b) else None
        existing.setdefault(known.key if known else _subject_of(b), b)
    formed = 0
    for key, subject, group in chosen:
        belief = existing.get(key)
        if belief is not None:
            new = [f for f in group if not belief.evidence.filter(pk=f.pk).exists()]
            if new and belief.status == Belief.Status.ACTIVE:
                with transaction.atomic():
                    belief.status = Belief.Status.STALE
                    _history(belief, "stale", new_evidence=[f.pk for f in new])
                    belief.updated_at = timezone.now()
                    belief.save(update_fields=["status", "history", "updated_at"])
                result.add("stale")
            continue
        if formed >= cfg("REFLECT_MAX_INSIGHTS"):
            continue
        text = ""
        try:
            answer = ctx.llm_json(
                purpose="reflect",
                system=FORM_SYSTEM,
                user=f"Subject: {subject.display}\n" + as_data(f.text for f in group[:30]),
                schema=InsightAnswer,
            )
            text = answer.insight.strip()
        except LlmSkipped:
            pass
        if not text:
            text = _deterministic_text(subject, group)
        with transaction.atomic():
            belief = Belief.objects.create(
                space=ctx.space, text=text, proof_count=len(group), updated_at=timezone.now()
            )
            belief.evidence.set(group)
            _history(belief, "form", subject=key, evidence=[f.pk for f in group])
            belief.save(update_fields=["history"])
            audit.record(
                space=ctx.space,
                action="add",
                target_type="belief",
                target_id=belief.pk,
                actor=ACTOR,
                evidence=[f.pk for f in group],
            )
        # Outside the transaction: embedding the insight may call a provider.
        item = _project(ctx, belief, subject)
        if item is not None:
            result.add("insights")
            result.detail.setdefault("insight_items", []).append(item.pk)
        existing[key] = belief
        formed += 1
        result.add("formed")


def _mark_stale_by_evidence(ctx: StepContext, result: StepResult) -> None:
    """Beliefs whose evidence was superseded or expired since, or with new
    facts overlapping their words, need a fresh look."""
    live_ids = set(live_items(ctx.space).values_list("pk", flat=True))
    recent = list(
        live_items(ctx.space)
        .filter(kind__in=EVIDENCE_KINDS, created_at__gte=ctx.since or timezone.now())
        .only("pk", "text")
    )
    threshold = cfg("REFLECT_NEAR_JACCARD")
    for belief in Belief.objects.filter(space=ctx.space, status=Belief.Status.ACTIVE):
        evidence = set(belief.evidence.values_list("pk", flat=True))
        lost = evidence - live_ids
        words = token_set(belief.text)
        near = [
            f.pk
            for f in recent
            if f.pk not in evidence and jaccard(words, token_set(f.text)) >= threshold
        ]
        if not lost and not near:
            continue
        with transaction.atomic():
            belief.status = Belief.Status.STALE
            _history(belief, "stale", lost_evidence=sorted(lost), new_evidence=near)
            belief.updated_at = timezone.now()
            belief.save(update_fields=["status", "history", "updated_at"])
            if near:
                belief.evidence.add(*near)
        result.add("stale")


def _review(ctx: StepContext, result: StepResult, resolver: Resolver, groups: Groups) -> None:
    from memory.services.facts import invalidate

    live_ids = set(live_items(ctx.space).values_list("pk", flat=True))
    for belief in list(Belief.objects.filter(space=ctx.space, status=Belief.Status.STALE)):
        subject = resolver(_subject_of(belief)) if _subject_of(belief) else None
        evidence = list(belief.evidence.all())
        live_evidence = [e for e in evidence if e.pk in live_ids]
        known = {e.pk for e in evidence}
        new = []
        if subject is not None and subject.key in groups:
            new = [f for f in groups[subject.key][1] if f.pk not in known]
        pool = live_evidence + new
        verdict, text = "", ""
        try:
            answer = ctx.llm_json(
                purpose="reflect",
                system=JUDGE_SYSTEM,
                user=f"Belief: {belief.text}\nEvidence still standing:\n"
                + as_data(e.text for e in pool[:30])
                + f"\nEvidence withdrawn: {len(evidence) - len(live_evidence)}",
                schema=VerdictAnswer,
            )
            verdict, text = answer.verdict, answer.text.strip()
        except LlmSkipped:
            pass
        if verdict not in ("refine", "still", "refute"):
            # Deterministic judgement: a belief whose evidence has mostly been
            # withdrawn no longer stands; new support refines it.
            if len(live_evidence) * 2 < len(evidence) or len(pool) < cfg("REFLECT_MIN_EVIDENCE"):
                verdict = "refute"
            elif new:
                verdict = "refine"
            else:
                verdict = "still"
        with transaction.atomic():
            if new:
                belief.evidence.add(*new)
            belief.proof_count = len(pool)
            belief.updated_at = timezone.now()
            if verdict == "refute":
                belief.status = Belief.Status.REFUTED
                item = _insight_item(belief)
                if item is not None:
                    invalidate(item=item, actor=ACTOR, reason="belief refuted")
            else:
                belief.status = Belief.Status.ACTIVE
                if verdict == "refine":
                    belief.text = text or (
                        _deterministic_text(subject, pool) if subject is not None else belief.text
                    )
            _history(belief, verdict, proof_count=belief.proof_count)
            belief.save()
            audit.record(
                space=ctx.space,
                action=verdict,
                target_type="belief",
                target_id=belief.pk,
                actor=ACTOR,
                proof_count=belief.proof_count,
            )
        if verdict == "refine":
            item = _project(ctx, belief, subject)
            if item is not None:
                result.detail.setdefault("refined_items", []).append(item.pk)
        result.add(verdict + "d" if verdict != "still" else "still")


def _merge_beliefs(ctx: StepContext, result: StepResult) -> None:
    threshold = cfg("REFLECT_BELIEF_MERGE_JACCARD")
    beliefs = list(
        Belief.objects.filter(space=ctx.space, status=Belief.Status.ACTIVE).order_by("pk")
    )
    closed: set[int] = set()
    for i, keep in enumerate(beliefs):
        if keep.pk in closed:
            continue
        for other in beliefs[i + 1 :]:
            if (
                other.pk in closed
                or jaccard(token_set(keep.text), token_set(other.text)) < threshold
            ):
                continue
            with transaction.atomic():
                keep.evidence.add(*other.evidence.all())
                keep.proof_count = keep.evidence.count()
                _history(keep, "merge", absorbed=other.pk)
                keep.updated_at = timezone.now()
                keep.save()
                other.status = Belief.Status.REFUTED
                _history(other, "merged", into=keep.pk)
                other.save(update_fields=["status", "history"])
                item = _insight_item(other)
                if item is not None:
                    from memory.services.facts import invalidate

                    invalidate(item=item, actor=ACTOR, reason=f"belief merged into {keep.pk}")
                audit.record(
                    space=ctx.space,
                    action="merge",
                    target_type="belief",
                    target_id=keep.pk,
                    actor=ACTOR,
                    absorbed=other.pk,
                )
            closed.add(other.pk)
            result.add("beliefs_merged")


def run(ctx: StepContext) -> StepResult:
    result = StepResult(
        counts={
            "insights": 0,
            "formed": 0,
            "stale": 0,
            "refined": 0,
            "still": 0,
            "refuted": 0,
            "beliefs_merged": 0,
        }
    )
    _mark_stale_by_evidence(ctx, result)
    resolver, groups = _groups(ctx)
    _form(ctx, result, resolver, groups)
    _review(ctx, result, resolver, groups)
    _merge_beliefs(ctx, result)
    return result
