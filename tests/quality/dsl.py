"""The small language the memory-quality scenarios are written in.

A scenario is a list of steps run in order against its own space:

- `say(...)` / `bot(...)`: a user or assistant turn (session, ts, text). A user
  turn carries the facts a good LLM extracts from it (`F(...)`), which script
  the fake LLM in the "llm" runs; the rule-based runs ignore them.
- `Mark("T1")`: wait until the worker has processed everything, then note the
  wall clock under that name (for `known_at`).
- `Write(...)`: an explicit POST /memory/facts.
- checks (`Facts`, `Chain`, `Recall`, `Context`, `Core`, `NoFacts`): wait until
  processed, then ask the HTTP API and compare.

Dates are days ("2025-03-10"); a turn's ts is that day at 10:00 UTC unless a
time is given. Where the wording leaves a day open ("last month"), an expected
day may be a tuple of the acceptable days. `as_of` and `known_at` take a day
or a mark's name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

Day = Union[str, tuple[str, ...]]  # noqa: UP007 (a type alias evaluated at runtime)


@dataclass(frozen=True)
class F:
    """A fact a good LLM extracts from a user turn."""

    text: str
    predicate: str
    object: str = ""
    subject: str = "user"
    kind: str = "fact"
    importance: float = 0.8
    valid_from: str | None = None
    retract: bool = False
    single_valued: bool = False

    def wire(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "kind": self.kind,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "importance": self.importance,
            "valid_from": self.valid_from,
            "retract": self.retract,
            "single_valued": self.single_valued,
        }


@dataclass(frozen=True)
class Say:
    session: str
    ts: str
    text: str
    role: str = "user"
    facts: tuple[F, ...] = ()


def say(session: str, ts: str, text: str, *facts: F) -> Say:
    return Say(session=session, ts=ts, text=text, facts=facts)


def bot(session: str, ts: str, text: str) -> Say:
    return Say(session=session, ts=ts, text=text, role="assistant")


@dataclass(frozen=True)
class Mark:
    name: str


@dataclass(frozen=True)
class Write:
    """POST /memory/facts."""

    text: str
    subject: str = "user"
    predicate: str = ""
    object: str = ""
    valid_from: str | None = None
    importance: float = 0.8


@dataclass(frozen=True)
class Facts:
    """GET /memory/facts: the objects current at the asked instant are exactly
    `objects` (casefolded). `answer_subject`: every fact answered has this
    canonical subject."""

    subject: str = "user"
    predicate: str | None = None
    objects: tuple[str, ...] = ()
    as_of: str | None = None
    known_at: str | None = None
    answer_subject: str | None = None
    # the valid_from day of each current object, where it matters
    since: dict[str, Day] = field(default_factory=dict)


@dataclass(frozen=True)
class W:
    """One window of a fact chain: object, valid_from day, valid_to day or None."""

    object: str
    since: Day
    until: Day | None = None


@dataclass(frozen=True)
class Chain:
    """GET /memory/facts?include_history=true: exactly these windows, newest
    first. A window whose `until` equals the next newer window's `since` was
    superseded by it: the two must abut to the day and the old one's
    superseded_by must name the new one."""

    subject: str
    predicate: str
    windows: tuple[W, ...]
    known_at: str | None = None


@dataclass(frozen=True)
class Recall:
    """POST /recall. `current`: a fact result containing each has current true.
    `stale`: no fact result containing it is current (with include_history, at
    least one such fact is returned, current false). `replaced`: (old, new)
    pairs: the old fact's superseded_by is the new fact's id. `stale_turns` /
    `fresh_turns`: turn results containing it have / have no superseded_by.
    `above`: (higher, lower): the first result containing `higher` ranks above
    the first containing `lower`. `absent`: no result contains it."""

    query: str
    current: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    replaced: tuple[tuple[str, str], ...] = ()
    stale_turns: tuple[str, ...] = ()
    fresh_turns: tuple[str, ...] = ()
    above: tuple[tuple[str, str], ...] = ()
    absent: tuple[str, ...] = ()
    include_history: bool = False
    as_of: str | None = None
    known_at: str | None = None
    types: tuple[str, ...] | None = None
    k: int = 10
    path: str = "/recall"  # or "/memory/search": the same read
    graded: bool = False  # fact scores are not all equal


@dataclass(frozen=True)
class Context:
    """GET /context: `current` appear in a line presented as current,
    `not_current` never do, `absent` appear nowhere in the recalled block,
    `no_line`: no entry's own text begins with it (a neighbouring turn is
    folded into its hit, not a line of its own), `history`: former facts shown
    as 'formerly (until day)', `empty`: the recalled block is empty. Every
    context answer must list current facts, then episodes, then history."""

    query: str
    current: tuple[str, ...] = ()
    not_current: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    no_line: tuple[str, ...] = ()
    # (text, day): a 'formerly (until day)' line with the text
    history: tuple[tuple[str, str], ...] = ()
    empty: bool = False
    as_of: str | None = None
    known_at: str | None = None


@dataclass(frozen=True)
class Core:
    """GET /core/user contains each of `has` and none of `lacks`."""

    has: tuple[str, ...] = ()
    lacks: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoFacts:
    """No fact at all, current or history, and /status counts none."""


Check = Union[Facts, Chain, Recall, Context, Core, NoFacts]  # noqa: UP007
Step = Union[Say, Mark, Write, Facts, Chain, Recall, Context, Core, NoFacts]  # noqa: UP007


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    steps: tuple[Step, ...]
    # extra /context queries for the suite-wide truth check
    queries: tuple[str, ...] = ()

    @property
    def turns(self) -> list[Say]:
        return [s for s in self.steps if isinstance(s, Say)]

    def stale_slots(self) -> set[tuple[str, str]]:
        """(predicate, object) of every fact the scenario's chains say has ended."""
        out: set[tuple[str, str]] = set()
        for step in self.steps:
            if isinstance(step, Chain) and step.known_at is None:
                for w in step.windows:
                    if w.until is not None:
                        out.add((step.predicate, w.object.casefold()))
        return out

    def live_objects(self) -> set[str]:
        out: set[str] = set()
        for step in self.steps:
            if isinstance(step, Chain) and step.known_at is None:
                out |= {w.object.casefold() for w in step.windows if w.until is None}
            if isinstance(step, Facts) and step.as_of is None and step.known_at is None:
                out |= {o.casefold() for o in step.objects}
        return out

    def windows(self) -> dict[tuple[str, str], list[W]]:
        """(predicate, object) -> the windows the scenario's final chains expect."""
        out: dict[tuple[str, str], list[W]] = {}
        for step in self.steps:
            if isinstance(step, Chain) and step.known_at is None:
                for w in step.windows:
                    out.setdefault((step.predicate, w.object.casefold()), []).append(w)
        return out

    def stale_turns(self) -> list[Say]:
        """User turns that state a fact that has since ended: the window the
        turn opened (matched by its day) has an end, or, for a restatement,
        every window of that value has ended."""
        windows = self.windows()
        out = []
        for t in self.turns:
            if t.role != "user":
                continue
            for f in t.facts:
                if f.retract:
                    continue
                wins = windows.get((f.predicate, f.object.casefold()), [])
                day = f.valid_from or t.ts[:10]
                opened = [
                    w for w in wins if day in ((w.since,) if isinstance(w.since, str) else w.since)
                ]
                if (opened and any(w.until for w in opened)) or (
                    not opened and wins and all(w.until for w in wins)
                ):
                    out.append(t)
                    break
        return out


def in_order(sc: Scenario) -> Scenario:
    """The twin of a backfill scenario: its turns posted in the order they
    were said (by ts, stable), with the checks that do not name a mark."""
    says = sorted((s for s in sc.steps if isinstance(s, Say)), key=lambda s: s.ts)
    checks = [
        s
        for s in sc.steps
        if not isinstance(s, (Say, Mark))
        and not (getattr(s, "known_at", None) or "").startswith("T")
    ]
    return Scenario(
        f"{sc.name}_in_order",
        f"In-order twin of {sc.name}: the same final state.",
        (*says, *checks),
        sc.queries,
    )


def script(scenarios: list[Scenario]) -> dict[str, list[dict[str, Any]]]:
    """Turn text -> the facts a good LLM extracts, over every scenario."""
    out: dict[str, list[dict[str, Any]]] = {}
    for sc in scenarios:
        for turn in sc.turns:
            if turn.role != "user":
                continue
            facts = [f.wire() for f in turn.facts]
            if turn.text in out and out[turn.text] != facts:
                raise ValueError(f"{sc.name}: turn {turn.text!r} is scripted two ways")
            out[turn.text] = facts
    return out
