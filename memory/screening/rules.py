"""What a redaction rule is and how one is applied.

A rule is a pattern plus, optionally, a function that narrows a match to the
part that is secret (so `postgres://app:pw@db` keeps its scheme, user and
host) or rejects it (a number whose check digit is wrong). Rejecting a match
restarts the search one character later, so a rejected candidate never hides
a real one that overlaps it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
_MARKER_START = "[REDACTED:"

# (start, end, kind) of the secret inside a match, or None to keep the match.
Finder = Callable[[re.Match[str]], "tuple[int, int, str] | None"]


@dataclass(frozen=True)
class Rule:
    kinds: tuple[str, ...]  # every kind this rule can answer, for ENGRAM_REDACT
    pattern: re.Pattern[str]
    find: Finder


def whole(kind: str, group: int | str = 0) -> Finder:
    """The finder of a rule whose match (or one group of it) is the secret."""

    def find(m: re.Match[str]) -> tuple[int, int, str] | None:
        start, end = m.span(group)
        return None if start < 0 or start == end else (start, end, kind)

    return find


def checked(kind: str, check: Callable[[str], bool], group: int | str = 0) -> Finder:
    """A finder that keeps the match unless `check` accepts its text."""

    def find(m: re.Match[str]) -> tuple[int, int, str] | None:
        start, end = m.span(group)
        if start < 0 or not check(m.group(group)):
            return None
        return start, end, kind

    return find


def rule(kind: str, pattern: str, flags: int = 0, *, find: Finder | None = None) -> Rule:
    return Rule(kinds=(kind,), pattern=re.compile(pattern, flags), find=find or whole(kind))


def apply(text: str, r: Rule, enabled: Collection[str]) -> str:
    if not any(k in enabled for k in r.kinds):
        return text
    out: list[str] = []
    last = pos = 0
    while pos <= len(text):
        m = r.pattern.search(text, pos)
        if m is None:
            break
        found = r.find(m)
        if found is None or found[2] not in enabled:
            pos = m.start() + 1
            continue
        start, end, kind = found
        secret = text[start:end]
        if start < last or not secret.strip() or _MARKER_START in secret:
            pos = m.start() + 1
            continue
        out += [text[last:start], f"[REDACTED:{kind}]"]
        last = end
        pos = max(m.end(), end, m.start() + 1)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
