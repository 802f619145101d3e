"""Step 5: reflect. Distil the period's facts into a few insights and keep
beliefs honest with their evidence.

- Form: facts sharing a subject, at least REFLECT_MIN_EVIDENCE of them, become
  a belief listing them as evidence (proof_count = how many), projected into
  recall as one `insight` item. The LLM words it when available; otherwise it
  is the subject and its strongest facts in one line.
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

from collections import defaultdict
from datetime import timedelta
from typing import Any, Literal

from django.db import transaction
from django.utils import timezone
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
    space_now,
    token_set,
)
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


def _deterministic_text(subject: str, facts: list[MemoryItem]) -> str:
    strongest = sorted(facts, key=lambda f: (f.importance, f.frequency, f.pk), reverse=True)[:5]
    parts = [f.text.rstrip(". ") for f in strongest]
    return f"{subject}: recurring across {len(facts)} memories — " + "; ".join(parts) + "."


def _subject_of(belief: Belief) -> str:
    for entry in reversed(belief.history or []):
        if entry.get("subject"):
            return str(entry["subject"])
    return ""


def _project(ctx: StepContext, belief: Belief, subject: str, result: StepResult) -> None:
    """Write (or rewrite) the belief's insight item, the form recall sees."""
    from memory.services.facts import save_fact, supersede

    evidence_ids = sorted(belief.evidence.values_list("pk", flat=True))
    old = _insight_item(belief)
    if old is not None and old.text == belief.text:
        return
    fact = save_fact(
        space=ctx.space,
        text=belief.text,
        subject=subject,
        kind=MemoryItem.Kind.INSIGHT,
        importance=0.7,
        source=ACTOR,
        actor=ACTOR,
    )
    item = fact.item
    if item is None:
        return
    # The evidence links travel with the insight so recall and the UI can show them.
    meta = {**(item.metadata or {}), "belief_id": belief.pk, "evidence": evidence_ids}
    MemoryItem.objects.filter(pk=item.pk).update(metadata=meta)
    if old is not None and old.pk != item.pk:
        supersede(old=old, new=item, actor=ACTOR)
    if fact.action in ("ADD", "UPDATE"):
        result.add("insights")
        result.detail.setdefault("insight_items", []).append(item.pk)


def _form(ctx: StepContext, result: StepResult) -> None:
    now = space_now(ctx.space)
    period_start = now - timedelta(days=cfg("REFLECT_PERIOD_DAYS"))
    facts = list(
        live_items(ctx.space).filter(kind__in=EVIDENCE_KINDS).exclude(subject="").order_by("pk")
    )
    by_subject: dict[str, list[MemoryItem]] = defaultdict(list)
    for f in facts:
        by_subject[norm(f.subject)].append(f)
    minimum = cfg("REFLECT_MIN_EVIDENCE")
    groups = [
        (subject, group)
        for subject, group in by_subject.items()
        if len(group) >= minimum
        and any((f.valid_from or f.last_seen) >= period_start for f in group)
    ]
    groups.sort(key=lambda g: len(g[1]), reverse=True)
    existing = {
        _subject_of(b): b
        for b in Belief.objects.filter(space=ctx.space).exclude(status=Belief.Status.REFUTED)
    }
    formed = 0
    for subject, group in groups:
        belief = existing.get(subject)
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
        display = group[0].subject
        text = ""
        try:
            answer = ctx.llm_json(
                purpose="reflect",
                system=FORM_SYSTEM,
                user=f"Subject: {display}\n" + as_data(f.text for f in group[:30]),
                schema=InsightAnswer,
            )
            text = answer.insight.strip()
        except LlmSkipped:
            pass
        if not text:
            text = _deterministic_text(display, group)
        with transaction.atomic():
            belief = Belief.objects.create(
                space=ctx.space, text=text, proof_count=len(group), updated_at=timezone.now()
            )
            belief.evidence.set(group)
            _history(belief, "form", subject=subject, evidence=[f.pk for f in group])
            belief.save(update_fields=["history"])
            audit.record(
                space=ctx.space,
                action="add",
                target_type="belief",
                target_id=belief.pk,
                actor=ACTOR,
                evidence=[f.pk for f in group],
            )
        # Outside the transaction: saving a fact may consult the LLM.
        _project(ctx, belief, subject, result)
        existing[subject] = belief
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


def _review(ctx: StepContext, result: StepResult) -> None:
    from memory.services.facts import invalidate

    live_ids = set(live_items(ctx.space).values_list("pk", flat=True))
    for belief in list(Belief.objects.filter(space=ctx.space, status=Belief.Status.STALE)):
        subject = _subject_of(belief)
        evidence = list(belief.evidence.all())
        live_evidence = [e for e in evidence if e.pk in live_ids]
        new = []
        if subject:
            new = [
                f
                for f in live_items(ctx.space).filter(kind__in=EVIDENCE_KINDS)
                if norm(f.subject) == subject and f.pk not in {e.pk for e in evidence}
            ]
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
                    belief.text = text or _deterministic_text(
                        pool[0].subject if pool else subject, pool
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
            _project(ctx, belief, subject, result)
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
    _form(ctx, result)
    _review(ctx, result)
    _merge_beliefs(ctx, result)
    return result
