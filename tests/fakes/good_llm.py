"""A responder for FakeLLM that answers Engram's pipeline prompts the way a
careful LLM would, so the LLM path can be tested for what it should get right.

Extraction: the facts come from a script keyed by the turn's text (the
scenario author wrote down what a good model reads in that turn). A turn the
script does not know is answered with no facts and remembered in `misses`, so a
test can insist every turn it sends is scripted.

Resolution: decided by reading the NEW and EXISTING lines of the prompt, as a
good model would: UPDATE when a single-valued predicate of the same subject gets
a new value, NOOP on a restatement, DELETE on a retraction, ADD otherwise. The
subject, predicate and object of an EXISTING fact are read from the prompt when
it gives them, else looked up among the facts this responder extracted (a model
understands its own sentences), else parsed from the canonical rule-based
wording ("User works at X").

The answer carries only the fields the extraction schema on this branch
declares (memory.services.pipeline.extract.ExtractedFact), so the fake stays in
step with the schema as it grows (e.g. `single_valued`)."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

# The predicates that hold one value at a time (the issue 11 contract), plus
# favorite_*; a scripted fact can mark any other predicate single-valued.
SINGLE_VALUED = frozenset(
    {"lives_in", "works_at", "role", "manager", "partner", "spouse", "name", "age", "studies_at"}
)
OPPOSITES = {"likes": "dislikes", "dislikes": "likes"}

_TURN = re.compile(r"^TURN \[(?P<role>\w+)\][^\n]*:\n(?P<text>.*)\Z", re.S | re.M)
_NEW = re.compile(r"^NEW (?P<i>\d+): (?P<rest>.*)$")
_EXISTING = re.compile(r"^\s*EXISTING id=(?P<id>\d+): (?P<rest>.*)$")
_ATTR = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[\w:.+-]+)")
_CANONICAL = [
    (re.compile(r"^(?P<s>.+?) (?:works|work) (?:at|for) (?P<o>.+)$"), "works_at"),
    (re.compile(r"^(?P<s>.+?) (?:lives|live) in (?P<o>.+)$"), "lives_in"),
    (re.compile(r"^(?P<s>.+?) (?:studies|study) at (?P<o>.+)$"), "studies_at"),
    (re.compile(r"^(?P<s>User) is an? (?P<o>.+)$"), "role"),
    (re.compile(r"^(?P<s>User) is (?P<o>\d+) years old$"), "age"),
    (re.compile(r"^(?P<s>User)'s favou?rite (?P<w>[\w ]+?) is (?P<o>.+)$"), "favorite_"),
    (re.compile(r"^(?P<s>User)'s (?P<w>[\w ]+?) is (?P<o>.+)$"), ""),
]


@dataclass(frozen=True)
class Slot:
    subject: str
    predicate: str
    object: str
    single_valued: bool = False


def _norm(value: str) -> str:
    return " ".join(re.findall(r"\w+", value.casefold()))


def _unquote(raw: str) -> str:
    if raw[:1] in "'\"" and raw[-1:] == raw[:1]:
        return raw[1:-1].replace("\\'", "'").replace('\\"', '"')
    return raw


def _attrs(text: str) -> tuple[str, dict[str, str]]:
    """'User works at X (subject='user', ...)' -> ('User works at X', {...})."""
    start = text.rfind(" (")
    if start == -1 or not text.endswith(")"):
        return text, {}
    inner = text[start + 2 : -1]
    found = {k: _unquote(v) for k, v in _ATTR.findall(inner)}
    if not found:
        # "(since 2025-01-10)" and the like: no attributes, keep the text.
        return text[:start], {}
    return text[:start], found


@dataclass
class GoodLLM:
    # turn text -> the facts a good model extracts from it (dicts with the keys
    # of ExtractedFact, plus an optional "single_valued")
    script: dict[str, list[dict[str, Any]]]
    misses: list[str] = field(default_factory=list)
    _known: dict[str, Slot] = field(default_factory=dict)
    _user_aliases: set[str] = field(default_factory=lambda: {"user", "me", "i"})
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for facts in self.script.values():
            for f in facts:
                self._learn(f)

    def _learn(self, f: dict[str, Any]) -> None:
        subject = f.get("subject") or "user"
        slot = Slot(subject, f["predicate"], f.get("object", ""), bool(f.get("single_valued")))
        self._known[_norm(f["text"])] = slot
        if _norm(subject) == "user" and f["predicate"] in ("name", "nickname") and f.get("object"):
            name = _norm(f["object"])
            self._user_aliases.add(name)
            self._user_aliases.add(name.split()[0])

    # -- the wire ---------------------------------------------------------------------

    def __call__(self, body: dict[str, Any]) -> str | None:
        messages = body.get("messages") or []
        if not messages:
            return None
        system = messages[0].get("content") or ""
        # The first user message is the prompt; a repair request follows it.
        user = next((m["content"] for m in messages[1:] if m.get("role") == "user"), "")
        if "extract durable facts" in system:
            return self.extract(user)
        if "maintain a memory of facts" in system:
            return self.resolve(user)
        return None

    def extract(self, prompt: str) -> str:
        m = _TURN.search(prompt)
        if m is None or m.group("role") != "user":
            return json.dumps({"facts": []})
        text = m.group("text").strip()
        facts = self.script.get(text)
        if facts is None:
            with self._lock:
                self.misses.append(text)
            return json.dumps({"facts": []})
        from memory.services.pipeline.extract import ExtractedFact

        declared = set(ExtractedFact.model_fields)
        out = []
        for f in facts:
            fact = dict(f)
            if "single_valued" in declared:
                fact["single_valued"] = bool(f.get("single_valued")) or self._single(f["predicate"])
            out.append({k: v for k, v in fact.items() if k in declared})
        return json.dumps({"facts": out})

    # -- resolution -------------------------------------------------------------------

    def _single(self, predicate: str) -> bool:
        return predicate in SINGLE_VALUED or predicate.startswith("favorite_")

    def _same_subject(self, a: str, b: str) -> bool:
        a, b = _norm(a), _norm(b)
        if a == b:
            return True
        return a in self._user_aliases and b in self._user_aliases

    def _slot(self, text: str, attrs: dict[str, str]) -> Slot | None:
        if attrs.get("predicate"):
            return Slot(attrs.get("subject", ""), attrs["predicate"], attrs.get("object", ""))
        known = self._known.get(_norm(text))
        if known is not None:
            return known
        for pattern, predicate in _CANONICAL:
            m = pattern.match(text.strip().rstrip("."))
            if m is None:
                continue
            word = re.sub(r"\W+", "_", m.groupdict().get("w") or "").strip("_").lower()
            name = predicate + word if predicate in ("favorite_", "") else predicate
            if name:
                return Slot(m.group("s"), name, m.group("o"))
        return None

    def resolve(self, prompt: str) -> str:
        groups: list[tuple[int, Slot | None, bool, list[tuple[int, Slot | None]]]] = []
        for line in prompt.splitlines():
            new = _NEW.match(line)
            if new:
                text, attrs = _attrs(new.group("rest"))
                slot = self._slot(text, attrs)
                retract = attrs.get("retract", "false").lower() == "true"
                single = attrs.get("single_valued", "").lower() == "true"
                if slot is not None and single:
                    slot = Slot(slot.subject, slot.predicate, slot.object, True)
                groups.append((int(new.group("i")), slot, retract, []))
                continue
            existing = _EXISTING.match(line)
            if existing and groups:
                text, attrs = _attrs(existing.group("rest"))
                groups[-1][3].append((int(existing.group("id")), self._slot(text, attrs)))
        decisions = []
        for index, slot, retract, existing in groups:
            action, ids = self._decide(slot, retract, existing)
            decisions.append({"index": index, "action": action, "ids": ids})
        return json.dumps({"decisions": decisions})

    def _decide(
        self, new: Slot | None, retract: bool, existing: list[tuple[int, Slot | None]]
    ) -> tuple[str, list[int]]:
        if new is None or not new.predicate:
            return "ADD", []
        same = [
            (pk, s)
            for pk, s in existing
            if s is not None
            and s.predicate == new.predicate
            and self._same_subject(s.subject, new.subject)
        ]
        same_value = [pk for pk, s in same if _norm(s.object) == _norm(new.object)]
        if retract:
            targets = same_value if new.object else [pk for pk, _ in same]
            if not targets and self._single(new.predicate):
                targets = [pk for pk, _ in same]
            return ("DELETE", targets) if targets else ("NOOP", [])
        if same_value:
            return "NOOP", same_value[:1]
        opposite = OPPOSITES.get(new.predicate)
        if opposite:
            flipped = [
                pk
                for pk, s in existing
                if s is not None
                and s.predicate == opposite
                and self._same_subject(s.subject, new.subject)
                and _norm(s.object) == _norm(new.object)
            ]
            if flipped:
                return "UPDATE", flipped
        if same and (new.single_valued or self._single(new.predicate)):
            return "UPDATE", [pk for pk, _ in same]
        return "ADD", []
