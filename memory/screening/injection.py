"""What makes stored text dangerous to put in front of a model later: hidden
Unicode, forged role and memory tags, instruction-like text, exfiltration
links and remote images."""

from __future__ import annotations

import re

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

FLAGGING = {
    "forged_tag",
    "hidden_tag_characters",
    "bidi_override",
    "markdown_image",
    "exfiltration_link",
    *(name for name, _ in _INSTRUCTION_PATTERNS),
}


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


def injection_reasons(text: str) -> list[str]:
    """Why `text` (already stripped of hidden characters and forged tags) reads
    like an attack on the model that will see it later."""
    reasons = [name for name, pattern in _INSTRUCTION_PATTERNS if pattern.search(text)]
    if _MD_IMAGE.search(text) or _HTML_IMAGE.search(text):
        reasons.append("markdown_image")
    if any(_EXFIL_QUERY.search(url) for url in _URL.findall(text)):
        reasons.append("exfiltration_link")
    return reasons
