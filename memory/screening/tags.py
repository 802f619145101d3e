"""Forged role, protocol and memory tags.

Recalled memory is framed in Engram's own tags and prompts are built from chat
templates; stored text that opens or closes one of those frames can make later
text read as the system, a tool or memory itself. Such tags are stripped and
flag the text. A whole recalled-memory block echoed back by an agent is not
new information (anti-echo): it becomes a placeholder, and flags only when
what it holds is itself an attack."""

from __future__ import annotations

import re
from collections.abc import Callable

# Names of the frames Engram and chat templates use.
_MEMORY_TAGS = (
    r"engram[-_:][a-z_:-]+|engram|memory|memories|recalled[-_ ]memory|relevant[-_ ]memory|"
    r"retrieved[-_ ]memory|memory[-_]context|core[-_]memory|long[-_]term[-_]memory"
)
_ROLE_TAGS = (
    r"system|system[-_]?prompt|system[-_]message|assistant|user|developer|tool|function|im_start|"
    r"im_end|instructions?|current[-_]request|context|prompt|sys|admin|human|"
    r"tool[-_]call|tool[-_]calls|tool[-_]use|tool[-_]result|function[-_]call|function[-_]calls|"
    r"function[-_]results?|start_of_turn|end_of_turn|untrusted[-_\w]*|trusted[-_]\w+|tool[-_](?:output|response)|"
    r"search[-_]results|external[-_]content|user[-_](?:input|query)|system[-_]reminder|system[-_]note"
)
_MEMORY_BLOCK = re.compile(
    rf"<\s*(?P<tag>{_MEMORY_TAGS})\b[^>]*>(?P<body>.*?)<\s*/\s*(?P=tag)\s*>", re.I | re.S
)
_FORGED_TAG = re.compile(
    rf"<\s*/?\s*(?:{_MEMORY_TAGS}|{_ROLE_TAGS})(?:\s[^<>]{{0,200}})?\s*/?\s*>"
    r"|<\|[a-z_]{2,30}\|>"  # <|im_start|>, <|system|>, <|endoftext|>
    r"|\[/?INST\]|<<\s*/?SYS\s*>>|<\s*/?\s*s\s*>(?=\s*\[INST)"
    r"|\[\s*/?\s*(?:engram[-_:][a-z_:-]+|system|system[-_ ]message|admin)\s*\]"
    r"|^[ \t]*#{2,}[ \t]*(?:system|assistant|user)[ \t]*:?[ \t]*$",
    re.I | re.M,
)
MEMORY_PLACEHOLDER = "[recalled memory omitted]"
ECHOED_TAG = "engram-recalled"  # memory.services.context.RECALLED_TAG


def strip_tags(
    text: str, *, judge: Callable[[str], list[str]] | None = None
) -> tuple[str, list[str]]:
    """`text` without forged tags, and the reasons. `judge` says what is wrong
    with the text inside an echoed memory block (an echo holding an attack is
    a forged block)."""
    reasons: list[str] = []

    def echo(m: re.Match[str]) -> str:
        # Engram frames recall only in <engram-recalled>; a block in any other
        # memory frame was not recalled by Engram, so it is a forgery.
        forged = m.group("tag").lower() != ECHOED_TAG
        if forged or (judge is not None and judge(m.group("body"))):
            reasons.append("forged_memory_block")
        return MEMORY_PLACEHOLDER

    if _MEMORY_BLOCK.search(text):
        reasons.append("echoed_memory")
        text = _MEMORY_BLOCK.sub(echo, text)
    if _FORGED_TAG.search(text):
        reasons.append("forged_tag")
        text = _FORGED_TAG.sub("", text)
    return text, reasons


def has_forged_tag(text: str) -> bool:
    return bool(_FORGED_TAG.search(text) or _MEMORY_BLOCK.search(text))
