"""What makes stored text dangerous to put in front of a model later: hidden
Unicode (`hidden`), forged role and memory tags (`tags`), instruction-like
text (`directives`), exfiltration links and remote images (`links`), each
also looked for through obfuscation (`views`)."""

from __future__ import annotations

from memory.screening import directives, links, tags, views
from memory.screening.hidden import strip_hidden
from memory.screening.tags import MEMORY_PLACEHOLDER

__all__ = ["FLAGGING", "MEMORY_PLACEHOLDER", "injection_reasons", "strip_hidden", "strip_tags"]

FLAGGING = frozenset(
    {
        "forged_tag",
        "forged_memory_block",
        "hidden_tag_characters",
        "bidi_override",
        "zero_width_smuggling",
        "markdown_image",
        "exfiltration_link",
        "obfuscated_text",
        "split_across_turns",
        *directives.NAMES,
    }
)


def _direct(text: str) -> list[str]:
    return directives.reasons(text) + links.reasons(text)


def injection_reasons(text: str) -> list[str]:
    """Why `text` (already stripped of hidden characters and forged tags) reads
    like an attack on the model that will see it later. A rule broken only in
    an obfuscated reading adds `obfuscated:<reading>`."""
    found = _direct(text)
    if found:
        return found
    for name, reading in views.readings(text):
        hidden = _direct(reading)
        if tags.has_forged_tag(reading):
            hidden.append("forged_tag")
        if hidden:
            return [*hidden, f"obfuscated:{name}", "obfuscated_text"]
    if views.compact_match(text):
        return ["obfuscated:run_together", "obfuscated_text"]
    return []


def _judge_echo(body: str) -> list[str]:
    stripped, hidden = strip_hidden(body)
    found = [r for r in hidden if r in FLAGGING]
    if tags.has_forged_tag(stripped):
        found.append("forged_tag")
    return found + injection_reasons(stripped)


def strip_tags(text: str) -> tuple[str, list[str]]:
    """`text` without forged tags; an echoed recall block becomes a
    placeholder, and flags the text when what it held is an attack."""
    return tags.strip_tags(text, judge=_judge_echo)
