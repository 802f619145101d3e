"""Screening and redaction for every write into Engram.

Memory is a prompt-injection persistence surface: text stored today is put in
front of a model tomorrow. So everything that enters (turns, facts, core memory,
imports) passes `screen()` first:

- secrets become `[REDACTED:kind]` before anything is stored or sent to an LLM;
- hidden Unicode (zero-width, bidi overrides, tag characters) is stripped;
- forged role/protocol tags (`<system>`, `<|im_start|>`, our own recall
  framing tags, ...) are stripped so stored text can never close or reopen the
  frame recall wraps memory in; recalled-memory blocks echoed back by an agent
  are replaced by a placeholder so memory does not reinforce itself;
- instruction-like text, forged tags, smuggling characters, exfiltration links
  and remote markdown images flag the text: it is stored quarantined, visible to
  curators, never recalled or injected.

`screen_strict()` is the screen for what goes into every prompt (core memory,
standing instructions): it also refuses directives to run commands, follow
links, call tools or send data, however they are framed. `split_reasons()`
judges a turn together with the end of the one before it, so an attack cut in
two halves is seen whole.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from memory.screening import directives
from memory.screening.injection import (
    FLAGGING,
    MEMORY_PLACEHOLDER,
    injection_reasons,
    strip_hidden,
    strip_tags,
)
from memory.screening.redaction import redact, redact_json

__all__ = [
    "MEMORY_PLACEHOLDER",
    "ScreenResult",
    "redact",
    "redact_json",
    "screen",
    "screen_fact",
    "screen_strict",
    "split_reasons",
    "strip_hidden",
    "strip_tags",
]


@dataclass(frozen=True)
class ScreenResult:
    text: str  # redacted, forged tags and hidden characters stripped
    flagged: bool
    reasons: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "flagged" if self.flagged else "ok"


def screen(text: str) -> ScreenResult:
    """Redact, strip and judge one piece of incoming text."""
    text = unicodedata.normalize("NFC", text or "")
    text, reasons = strip_hidden(text)
    redacted = redact(text)
    if redacted != text:
        kinds = sorted(set(re.findall(r"\[REDACTED:([a-z_]+)\]", redacted)))
        reasons += [f"redacted:{k}" for k in kinds]
    text, tag_reasons = strip_tags(redacted)
    reasons += tag_reasons
    reasons += injection_reasons(text)
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    flagged = any(r in FLAGGING for r in reasons)
    return ScreenResult(text=text, flagged=flagged, reasons=reasons)


def screen_strict(text: str) -> ScreenResult:
    """`screen()`, and refuse too any directive to act (run a command, follow
    a link, call a tool, send data, set rules aside): core memory and
    standing instructions are in every prompt, so they hold facts about the
    user and preferences, never actions to take."""
    result = screen(text)
    if directives.dangerous_action(result.text):
        return ScreenResult(
            text=result.text, flagged=True, reasons=[*result.reasons, "standing_directive"]
        )
    return result


# Facts of these kinds, or this important, can be promoted into core memory
# (memory.services.core.is_identity_grade; the importance is
# core_patch.IDENTITY_IMPORTANCE, kept here so screening imports no service).
_PROMPT_KINDS = frozenset({"instruction", "preference"})
_PROMPT_IMPORTANCE = 0.8


def screen_fact(text: str, *, kind: str = "fact", importance: float = 0.0) -> ScreenResult:
    """The screen for a fact: strict for a standing instruction, a preference
    or an identity-grade fact, which may reach every prompt through core
    memory; the turn screen otherwise."""
    if kind in _PROMPT_KINDS or importance >= _PROMPT_IMPORTANCE:
        return screen_strict(text)
    return screen(text)


# How much of the previous turn is read with this one: enough for the first
# half of a sentence, not so much that two unrelated turns are read as one.
SPLIT_TAIL = 300


def split_reasons(previous: str, text: str) -> list[str]:
    """Reasons to quarantine `text` (and `previous`) that neither shows alone:
    the end of the previous turn and this one read as one text, joined with
    and without a space (an attack may be cut inside a word). Both texts are
    as stored, i.e. already screened and not flagged themselves."""
    tail = previous[-SPLIT_TAIL:]
    head = text[:SPLIT_TAIL]
    if not tail.strip() or not head.strip():
        return []
    for joiner in (" ", ""):
        found = [r for r in injection_reasons(tail + joiner + head) if r in FLAGGING]
        if found:
            return [*found, "split_across_turns"]
    return []
