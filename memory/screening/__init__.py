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
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

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
