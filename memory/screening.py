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

# --- secrets ------------------------------------------------------------------------

# Order matters: multi-line and structured secrets first, so a PEM body or a
# JWT is replaced whole before the generic assignment rule sees its pieces.
_SECRET_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("api_key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{20,}")),
    (
        "bearer_token",
        re.compile(r"(?i)(?<=\bbearer )\s*[A-Za-z0-9._~+/=-]{16,}"),
    ),
    (
        "aws_secret",
        re.compile(r"(?i)(?<=aws_secret_access_key)(\s*[=:]\s*)[A-Za-z0-9/+=]{30,}"),
    ),
]

# "password = hunter2", "api_key: abc", "my password is hunter2": the value is
# replaced, the key word is kept so the sentence still reads.
_ASSIGNMENT = re.compile(
    r"(?i)\b(?P<key>pass(?:word|wd|phrase)?|pwd|secret|client[_ -]?secret|token|"
    r"access[_ -]?token|api[_ -]?key|private[_ -]?key)"
    r"(?P<sep>\s*(?:[:=]|\bis\b)\s*)"
    r"(?P<q>[\"']?)(?P<value>[^\s\"',;]{4,})(?P=q)"
)
_REDACTED = re.compile(r"\[REDACTED:[a-z_]+\]")


def redact(text: str) -> str:
    """Replace secrets in `text` with `[REDACTED:kind]`."""
    if not text:
        return text
    for kind, pattern in _SECRET_PATTERNS:
        if kind == "aws_secret":
            text = pattern.sub(r"\1[REDACTED:aws_secret]", text)
        else:
            text = pattern.sub(f"[REDACTED:{kind}]", text)

    def assignment(m: re.Match[str]) -> str:
        value = m.group("value")
        if _REDACTED.search(value) or value.lower() in _NOT_A_SECRET:
            return m.group(0)
        kind = "password" if m.group("key").lower().startswith(("pass", "pwd")) else "secret"
        return f"{m.group('key')}{m.group('sep')}[REDACTED:{kind}]"

    return _ASSIGNMENT.sub(assignment, text)


# Words after "password is" that are prose, not a password.
_NOT_A_SECRET = frozenset(
    "the a an my your our their too very not wrong correct incorrect expired stored "
    "required missing empty saved changed reset set".split()
)

# --- hidden Unicode -----------------------------------------------------------------

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")

# --- forged tags ----------------------------------------------------------------------

# Names of the frames Engram and chat templates use. Recalled memory is framed
# in one of the memory tags; an agent echoing such a block back is not new
# information (anti-echo), and a user typing one is forging the frame.
_MEMORY_TAGS = (
    r"engram[-_:][a-z_:-]+|memory|memories|recalled[-_ ]memory|relevant[-_ ]memory|"
    r"retrieved[-_ ]memory|memory[-_]context|core[-_]memory"
)
_ROLE_TAGS = (
    r"system|assistant|user|developer|tool|function|im_start|im_end|instructions?|"
    r"current[-_]request|context|prompt|sys"
)
_MEMORY_BLOCK = re.compile(
    rf"<\s*(?P<tag>{_MEMORY_TAGS})\b[^>]*>.*?<\s*/\s*(?P=tag)\s*>", re.I | re.S
)
_FORGED_TAG = re.compile(
    rf"<\s*/?\s*(?:{_MEMORY_TAGS}|{_ROLE_TAGS})(?:\s[^<>]{{0,200}})?\s*/?\s*>"
    r"|<\|[a-z_]{2,30}\|>"  # <|im_start|>, <|system|>, <|endoftext|>
    r"|\[/?INST\]|<<\s*/?SYS\s*>>"
    r"|^\s*#{2,}\s*(?:system|assistant|user)\s*:?\s*$",
    re.I | re.M,
)
MEMORY_PLACEHOLDER = "[recalled memory omitted]"

# --- instruction-like text ---------------------------------------------------------------

_INSTRUCTION_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "ignore_instructions",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
            r"(?:previous|prior|above|earlier|preceding|system|original|safety)\s+"
            r"(?:instructions?|prompts?|rules|messages|guidelines|directives)",
            re.I,
        ),
    ),
    (
        "role_override",
        re.compile(
            r"\byou\s+are\s+(?:now|no\s+longer)\b|\bnew\s+(?:system\s+)?instructions?\s*:"
            r"|\b(?:enter|enable|activate)\s+(?:developer|dan|god|jailbreak)\s+mode\b",
            re.I,
        ),
    ),
    (
        "prompt_exfiltration",
        re.compile(
            r"\b(?:reveal|print|output|repeat|show|leak|send)\s+(?:me\s+)?(?:your|the)\s+"
            r"(?:system\s+prompt|instructions|hidden\s+prompt|api\s+keys?|credentials|secrets)",
            re.I,
        ),
    ),
    (
        "concealment",
        re.compile(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert)\s+the\s+user\b",
            re.I,
        ),
    ),
    (
        "tool_hijack",
        re.compile(
            r"\b(?:when|whenever|next\s+time)\s+(?:you|the\s+assistant)\s+(?:read|see|recall|retrieve)s?\s+"
            r"this\b.{0,80}\b(?:execute|run|call|send|visit|open)\b",
            re.I | re.S,
        ),
    ),
]

# --- links ------------------------------------------------------------------------------

_MD_IMAGE = re.compile(r"!\[[^\]]{0,500}\]\(\s*<?(?:https?:)?//[^)\s]+", re.I)
_HTML_IMAGE = re.compile(r"<\s*img\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//", re.I)
_URL = re.compile(r"https?://[^\s<>\")\]]+", re.I)
# A query string that carries data out: templated placeholders, very long
# values, or parameters named like a payload.
_EXFIL_QUERY = re.compile(
    r"[?&](?:data|d|q|payload|secret|token|key|msg|content|memory|prompt|chat|conv)="
    r"(?:[^&\s]{60,}|[^&\s]*(?:\{|%7B|\$\(|<)[^&\s]*)"
    r"|[?&][^=&\s]+=[^&\s]{200,}",
    re.I,
)

_FLAGGING = {
    "forged_tag",
    "hidden_tag_characters",
    "bidi_override",
    "markdown_image",
    "exfiltration_link",
    *(name for name, _ in _INSTRUCTION_PATTERNS),
}


@dataclass(frozen=True)
class ScreenResult:
    text: str  # redacted, forged tags and hidden characters stripped
    flagged: bool
    reasons: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "flagged" if self.flagged else "ok"


def strip_hidden(text: str) -> tuple[str, list[str]]:
    reasons: list[str] = []
    if _TAG_CHARS.search(text):
        reasons.append("hidden_tag_characters")
        text = _TAG_CHARS.sub("", text)
    if _BIDI.search(text):
        reasons.append("bidi_override")
        text = _BIDI.sub("", text)
    if _ZERO_WIDTH.search(text):
        reasons.append("zero_width")
        text = _ZERO_WIDTH.sub("", text)
    return text, reasons


def strip_tags(text: str) -> tuple[str, list[str]]:
    reasons: list[str] = []
    if _MEMORY_BLOCK.search(text):
        reasons.append("echoed_memory")
        text = _MEMORY_BLOCK.sub(MEMORY_PLACEHOLDER, text)
    if _FORGED_TAG.search(text):
        reasons.append("forged_tag")
        text = _FORGED_TAG.sub("", text)
    return text, reasons


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
    for name, pattern in _INSTRUCTION_PATTERNS:
        if pattern.search(text):
            reasons.append(name)
    if _MD_IMAGE.search(text) or _HTML_IMAGE.search(text):
        reasons.append("markdown_image")
    if any(_EXFIL_QUERY.search(url) for url in _URL.findall(text)):
        reasons.append("exfiltration_link")
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    flagged = any(r in _FLAGGING for r in reasons)
    return ScreenResult(text=text, flagged=flagged, reasons=reasons)
