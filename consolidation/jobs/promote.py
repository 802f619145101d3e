"""Step 2: promote episodic patterns to semantic facts. A name or a two-word
phrase the user brought up in at least CONSOLIDATE_PROMOTE_MIN_SESSIONS
different sessions, which no live fact mentions, becomes a fact: written by
the LLM from the mentions when one is available, otherwise the most
informative sentence that mentions it."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from consolidation.jobs._common import (
    ACTOR,
    DATA_NOTE,
    STOPWORDS,
    LlmSkipped,
    StepContext,
    StepResult,
    as_data,
    cfg,
    content_words,
    sentences,
    usable_turns,
    words,
)
from memory.models import MemoryItem, Turn
from memory.selectors import live_items

_NAME = re.compile(r"\b([A-Z][a-zA-Z'\-]+(?:\s+[A-Z][a-zA-Z'\-]+){0,2})\b")


class PromoteAnswer(BaseModel):
    fact: str = Field(max_length=500)
    kind: Literal["fact", "preference", "event", "instruction"] = "fact"
    importance: float = Field(default=0.5, ge=0, le=1)


SYSTEM = (
    "The user mentioned the same topic in several conversations. Write ONE durable, "
    "self-contained fact about the user's world that these mentions support, as JSON "
    '{"fact": str, "kind": "fact"|"preference"|"event"|"instruction", "importance": 0..1}. '
    + DATA_NOTE
)


@dataclass
class Mention:
    phrase: str
    sessions: set[int] = field(default_factory=set)
    snippets: list[tuple[Turn, str]] = field(default_factory=list)


def _content(word: str) -> bool:
    return word not in STOPWORDS and len(word) > 2 and not word.isdigit()


def _phrases(sentence: str) -> set[str]:
    found: set[str] = set()
    # Capitalised names that do not open the sentence (an opening capital is grammar).
    for m in _NAME.finditer(sentence):
        if m.start() == 0:
            continue
        name = m.group(1)
        if name.lower() in STOPWORDS or len(name) < 3:
            continue
        found.add(name.lower())
    # Two adjacent content words ("pottery class"), never joined across a stopword.
    tokens = words(sentence)
    for a, b in zip(tokens, tokens[1:], strict=False):
        if _content(a) and _content(b):
            found.add(f"{a} {b}")
    return found


def collect(ctx: StepContext) -> list[Mention]:
    mentions: dict[str, Mention] = defaultdict(lambda: Mention(phrase=""))
    turns = (
        usable_turns(ctx.space).filter(role="user").select_related("session").order_by("ts", "id")
    )
    for turn in turns.iterator(chunk_size=500):
        for sentence in sentences(turn.text):
            for phrase in _phrases(sentence):
                m = mentions[phrase]
                m.phrase = phrase
                m.sessions.add(turn.session_id)
                if len(m.snippets) < 8:
                    m.snippets.append((turn, sentence))
    minimum = cfg("CONSOLIDATE_PROMOTE_MIN_SESSIONS")
    # A phrase in most sessions (the other person's name, the project's own
    # name) is the conversation's backdrop, not a topic worth a fact: the same
    # reasoning as inverse document frequency.
    total = len({s for m in mentions.values() for s in m.sessions})
    ceiling = total * 0.5 if total >= 6 else total
    frequent = [m for m in mentions.values() if minimum <= len(m.sessions) <= ceiling]
    # Longest and most widespread first; a phrase inside an already chosen one adds nothing.
    frequent.sort(
        key=lambda m: (len(m.sessions), len(m.phrase.split()), len(m.phrase)), reverse=True
    )
    chosen: list[Mention] = []
    for m in frequent:
        if any(m.phrase in c.phrase or c.phrase in m.phrase for c in chosen):
            continue
        chosen.append(m)
    return chosen


def known(ctx: StepContext, phrase: str) -> bool:
    live = live_items(ctx.space)
    return (
        live.filter(text__icontains=phrase).exists()
        or live.filter(subject__iexact=phrase).exists()
        or live.filter(object__iexact=phrase).exists()
    )


def _best_sentence(m: Mention) -> tuple[Turn, str]:
    return max(m.snippets, key=lambda s: (len(content_words(s[1])), -len(s[1])))


def run(ctx: StepContext) -> StepResult:
    from memory.services.facts import save_fact

    result = StepResult(counts={"candidates": 0, "promoted": 0, "noop": 0})
    limit = cfg("CONSOLIDATE_PROMOTE_MAX")
    for m in collect(ctx):
        if result.counts["promoted"] >= limit:
            break
        if known(ctx, m.phrase):
            continue
        result.add("candidates")
        source_turn, text = _best_sentence(m)
        kind: str = MemoryItem.Kind.FACT
        importance = 0.5
        # Provenance is what the text came from: the one quoted turn, or
        # every mention when the LLM wrote the fact from all of them.
        refs = [source_turn.ref] if source_turn.ref else []
        try:
            answer = ctx.llm_json(
                purpose="promote",
                system=SYSTEM,
                user=f"Topic: {m.phrase}\n" + as_data(s for _, s in m.snippets),
                schema=PromoteAnswer,
            )
            if answer.fact.strip():
                text, kind, importance = answer.fact.strip(), answer.kind, answer.importance
                refs = list(dict.fromkeys(t.ref for t, _ in m.snippets if t.ref))
        except LlmSkipped:
            pass
        fact = save_fact(
            space=ctx.space,
            text=text,
            subject=m.phrase,
            kind=kind,
            importance=max(0.0, min(1.0, importance)),
            source=ACTOR,
            actor=ACTOR,
            session=source_turn.session,
            turn_refs=refs[:20],
        )
        if fact.item is not None and fact.action in ("ADD", "UPDATE"):
            result.add("promoted")
            result.detail.setdefault("items", []).append(fact.item.pk)
        else:
            result.add("noop")
    return result
