"""Step 2: promote episodic patterns to semantic facts. A name or a two-word
phrase the user brought up in at least CONSOLIDATE_PROMOTE_MIN_SESSIONS
(ENGRAM_CONSOLIDATE_PROMOTE_SESSIONS) different sessions, which no live fact
mentions, becomes a fact: written by the LLM from the mentions when one is
available, otherwise "The user mentioned Priya in 3 sessions: ..." quoting
the most informative sentence, with the name as its subject.

Names: a capitalised word is a name where capitals are not grammar, i.e.
not opening a sentence. A name that opens a sentence ("Priya called
today") still counts when the user also writes it capitalised mid-sentence
somewhere, or the graph knows it; so a name said at the start of sentences
in most sessions is not lost. Commands (`code`, "$ cmd" lines, fenced
blocks) are not conversation: the skills step reads those."""

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

_NAME = re.compile(r"\b([A-Z][a-zA-Z'’\-]+(?:\s+[A-Z][a-zA-Z'’\-]+){0,2})\b")
_CAPITAL = re.compile(r"\b([A-Z][a-zA-Z'’\-]+)")
_COMMANDS = re.compile(r"```.*?(?:```|$)|`[^`\n]*`|^\s*\$\s.*$", re.S | re.M)
_PUNCTUATION = re.compile(r"[,;:()\[\]\"“”!?&/]+|\s[-–—]+\s")
INTERJECTIONS = frozenset("wow haha hahaha lol omg yay aww awww hmm ugh yep nope woah whoa".split())
# Capitalised by convention, not because they name someone.
CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december christmas easter".split()
)


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
    spellings: dict[str, int] = field(default_factory=dict)
    name: bool = False

    @property
    def display(self) -> str:
        """A name as the user writes it ("Boulder Lounge"), a phrase in lower case."""
        if not self.spellings:
            return self.phrase
        return max(self.spellings, key=lambda s: (self.spellings[s], s))


def _content(word: str) -> bool:
    return (
        word not in STOPWORDS and word not in INTERJECTIONS and len(word) > 2 and not word.isdigit()
    )


def conversation(text: str) -> str:
    """The text without its commands."""
    return _COMMANDS.sub(" ", text)


def _opens(sentence: str, at: int) -> bool:
    """Whether a word at `at` opens the sentence or a quotation in it."""
    before = sentence[:at].rstrip()
    return not before or before.endswith((":", '"', "\u201c", "(", "-", "\u2014"))


def _strip_possessive(name: str) -> str:
    return re.sub(r"['’]s$", "", name)


def _phrases(sentence: str, names: set[str]) -> dict[str, str]:
    """Phrase (lower case) -> its spelling here. `names` are words known to
    be names wherever they stand (see the module docstring)."""
    found: dict[str, str] = {}
    for m in _NAME.finditer(sentence):
        parts = m.group(1).split()
        if _opens(sentence, m.start()):
            # An opening capital is grammar, unless the word is a known name.
            while parts and _strip_possessive(parts[0]).lower() not in names:
                parts = parts[1:]
        name = _strip_possessive(" ".join(parts))
        low = name.lower()
        if (
            len(name) < 3
            or low in STOPWORDS
            or any(w in CALENDAR or w in INTERJECTIONS for w in low.split())
        ):
            continue
        found[low] = name
    # Two adjacent content words ("pottery class"), never joined across a
    # stopword or punctuation ("Wow, Melanie" is not a phrase).
    for span in _PUNCTUATION.split(sentence):
        tokens = words(span)
        for a, b in zip(tokens, tokens[1:], strict=False):
            if _content(a) and _content(b):
                found.setdefault(f"{a} {b}", f"{a} {b}")
    return found


def _known_names(ctx: StepContext, texts: list[str]) -> set[str]:
    """Words the user capitalises mid-sentence, and every one-word alias the
    graph knows: those are names even where they open a sentence."""
    from memory.models import EntityAlias

    names: set[str] = set()
    for text in texts:
        for sentence in sentences(text):
            for m in _CAPITAL.finditer(sentence):
                if _opens(sentence, m.start()):
                    continue
                word = _strip_possessive(m.group(1)).lower()
                if word not in STOPWORDS and word not in CALENDAR and word not in INTERJECTIONS:
                    names.add(word)
    names |= {
        n
        for n in EntityAlias.objects.filter(space=ctx.space).values_list("norm", flat=True)
        if n and " " not in n
    }
    return names


def _contains(outer: str, inner: str) -> bool:
    return f" {inner} " in f" {outer} "


def collect(ctx: StepContext) -> list[Mention]:
    mentions: dict[str, Mention] = defaultdict(lambda: Mention(phrase=""))
    turns = list(
        usable_turns(ctx.space)
        .filter(role="user")
        .select_related("session")
        .order_by("ts", "id")
        .only("id", "text", "ref", "session_id", "session__id", "ts")
    )
    texts = [conversation(t.text) for t in turns]
    names = _known_names(ctx, texts)
    for turn, text in zip(turns, texts, strict=True):
        for sentence in sentences(text):
            for phrase, spelling in _phrases(sentence, names).items():
                m = mentions[phrase]
                m.phrase = phrase
                m.sessions.add(turn.session_id)
                if spelling != phrase:
                    m.name = True
                    m.spellings[spelling] = m.spellings.get(spelling, 0) + 1
                if len(m.snippets) < 8:
                    m.snippets.append((turn, sentence))
    minimum = cfg("CONSOLIDATE_PROMOTE_MIN_SESSIONS")
    # A phrase in most sessions (the other person's name, the project's own
    # name) is the conversation's backdrop, not a topic worth a fact: the same
    # reasoning as inverse document frequency.
    total = len({s for m in mentions.values() for s in m.sessions})
    ceiling = total * 0.5 if total >= 6 else total
    frequent = [m for m in mentions.values() if minimum <= len(m.sessions) <= ceiling]
    # Names first, then the longest and most widespread; a phrase inside an
    # already chosen one adds nothing.
    frequent.sort(
        key=lambda m: (m.name, len(m.sessions), len(m.phrase.split()), len(m.phrase)),
        reverse=True,
    )
    chosen: list[Mention] = []
    for m in frequent:
        if any(_contains(m.phrase, c.phrase) or _contains(c.phrase, m.phrase) for c in chosen):
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
        source_turn, sentence = _best_sentence(m)
        n = len(m.sessions)
        topic = m.display if m.name else f"\u201c{m.display}\u201d"
        text = f"The user mentioned {topic} in {n} sessions: \u201c{sentence.strip()}\u201d"
        # Stored under the name itself, so reflection gathers it with that
        # person's facts. Not as a user -mentions-> edge: the graph channel
        # then lifted these quotes above the turns they came from (LoCoMo
        # conv 1-4: R@10 -0.003).
        subject, predicate, obj = m.display, "", ""
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
                subject, predicate, obj = m.display, "", ""
                refs = list(dict.fromkeys(t.ref for t, _ in m.snippets if t.ref))
        except LlmSkipped:
            pass
        fact = save_fact(
            space=ctx.space,
            text=text,
            subject=subject,
            predicate=predicate,
            object=obj,
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
