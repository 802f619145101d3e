"""Step 1: summarize sessions that have no summary, or whose summary covers
fewer turns than the session now has. The LLM writes it when one is
available; otherwise an extractive summary picks the sentences that carry the
session's most frequent content words."""

from __future__ import annotations

from collections import Counter

from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
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
    content_words,
    sentences,
)
from memory.models import Session, SessionSummary, Turn
from memory.services import audit


class SummaryAnswer(BaseModel):
    summary: str = Field(max_length=4000)


SYSTEM = (
    "You summarize one conversation for a long-term memory. Write 2-5 plain sentences: "
    "who took part, what was discussed, decisions, plans and facts worth remembering. "
    'Answer as JSON {"summary": str}. ' + DATA_NOTE
)


def extractive(turns: list[Turn], *, max_chars: int) -> str:
    """The sentences with the highest share of the session's frequent content
    words, kept in conversation order, until max_chars."""
    candidates: list[tuple[int, str, str]] = []  # (order, speaker, sentence)
    freq: Counter[str] = Counter()
    for turn in turns:
        for sentence in sentences(turn.text):
            words = content_words(sentence)
            if len(words) < 2:
                continue
            freq.update(set(words))
            candidates.append((len(candidates), turn.role, sentence))
    if not candidates:
        return ""

    def score(sentence: str) -> float:
        words = content_words(sentence)
        return sum(freq[w] for w in set(words)) / (len(words) ** 0.5)

    ranked = sorted(candidates, key=lambda c: score(c[2]), reverse=True)
    chosen: list[tuple[int, str, str]] = []
    used = 0
    for cand in ranked:
        line = f"{cand[1]}: {cand[2]}"
        if used + len(line) > max_chars and chosen:
            continue
        chosen.append(cand)
        used += len(line) + 1
        if used >= max_chars:
            break
    chosen.sort()
    return " ".join(f"{c[1].capitalize()}: {c[2]}" for c in chosen)[: max_chars + 200]


def pending_sessions(ctx: StepContext) -> list[Session]:
    summarized = SessionSummary.objects.filter(session=OuterRef("pk")).values("turn_count")[:1]
    return list(
        Session.objects.filter(space=ctx.space)
        .annotate(n=Count("turns", filter=Q(turns__screen_status="ok")), done=Subquery(summarized))
        .filter(n__gt=0)
        .filter(Q(done=None) | Q(done__lt=F("n")))
        .order_by("last_turn_at")[: cfg("CONSOLIDATE_SUMMARIZE_MAX_SESSIONS")]
    )


def run(ctx: StepContext) -> StepResult:
    result = StepResult(counts={"summarized": 0, "llm": 0, "extractive": 0})
    max_chars = cfg("CONSOLIDATE_SUMMARY_MAX_CHARS")
    for session in pending_sessions(ctx):
        turns = list(Turn.objects.filter(session=session, screen_status="ok").order_by("ts", "id"))
        if not turns:
            continue
        method = "extractive"
        text = ""
        try:
            transcript = [f"{t.role}: {t.text[:1500]}" for t in turns[-80:]]
            answer = ctx.llm_json(
                purpose="summarize", system=SYSTEM, user=as_data(transcript), schema=SummaryAnswer
            )
            text = answer.summary.strip()[: max_chars * 2]
            if text:
                method = "llm"
        except LlmSkipped:
            pass
        if not text:
            text = extractive(turns, max_chars=max_chars)
        if not text:
            continue
        with transaction.atomic():
            summary, created = SessionSummary.objects.update_or_create(
                session=session,
                defaults={
                    "space": ctx.space,
                    "text": text,
                    "turn_count": len(turns),
                    "first_ts": turns[0].ts,
                    "last_ts": turns[-1].ts,
                    "method": method,
                    "created_at": timezone.now(),
                },
            )
            audit.record(
                space=ctx.space,
                action="add" if created else "update",
                target_type="summary",
                target_id=summary.pk,
                actor=ACTOR,
                session=session.external_id,
                method=method,
                turns=len(turns),
            )
        result.add("summarized")
        result.add(method)
    return result
