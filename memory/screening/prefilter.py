"""A cheap, exact test that a pattern cannot match a text, so most of the
screening battery is skipped for ordinary chat.

Every match of a pattern like `\\b(?:ignore|disregard)\\s+(?:all\\s+)?previous`
contains "previous", and one of "ignore" or "disregard". `required()` reads
the parsed pattern and picks such sets of literals; `live()` drops a pattern
only when a set has none of its literals in the text, in which case the regex
could not have matched either. Both sides are case-folded and the characters the regex
engine treats as case-equivalent ("ı" and "i", "ſ" and "s", ...) are mapped
together, so an IGNORECASE match is never ruled out. A pattern with no
required literal is always run.

Screening a 45-character turn ran some 400 regexes on five readings (1.5 ms);
with this, most of them are skipped on a set lookup.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

# casefold() maps most of what `re` matches to each other under IGNORECASE
# ("ſ" and "s", the Kelvin sign and "k"), but not the Turkish dotless "ı",
# which `re` matches to "i", nor "İ", which folds to "i" and a combining dot
# that would part the "i" from the letters after it (the test checks every
# character of every literal against the regex engine itself).
_BEFORE_FOLD = str.maketrans({"İ": "i"})
_AFTER_FOLD = str.maketrans({"ı": "i"})


def fold(text: str) -> str:
    return text.translate(_BEFORE_FOLD).casefold().translate(_AFTER_FOLD)


def _selective(need: AbstractSet[str]) -> tuple[int, int]:
    return (min(len(x) for x in need), -len(need))


def _sequence(items: Any) -> list[frozenset[str]]:
    """The sets of literals every match of `items` holds one of, each."""
    needs: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            needs.append(frozenset({fold("".join(run))}))
            run.clear()

    for op, av in items:
        if op is sre.LITERAL:
            run.append(chr(av))
        elif op is sre.AT:
            continue  # zero width: the literals on either side stay adjacent
        else:
            flush()
            needs += _node(op, av)
    flush()
    return needs


def _node(op: Any, av: Any) -> list[frozenset[str]]:
    if op is sre.SUBPATTERN:
        return _sequence(av[-1])
    if op is sre.ATOMIC_GROUP:
        return _sequence(av)
    if op is sre.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            found = _sequence(alternative)
            if not found:
                return []  # one way to match needs no literal
            union |= max(found, key=_selective)
        return [frozenset(union)]
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, item = av
        return _sequence(item) if low >= 1 else []
    return []  # character classes, any, lookarounds, backreferences


Needs = tuple[frozenset[str], ...]


def required(pattern: re.Pattern[str]) -> Needs:
    """Sets of literals such that every match of `pattern` holds (case-folded)
    one literal of each set, most selective first; empty when the pattern
    needs no literal."""
    try:
        found = _sequence(_parser.parse(pattern.pattern, pattern.flags))
    except Exception:  # an internal parser change: never filter
        return ()
    # Whitespace and one-letter literals say nothing worth a lookup; past the
    # two most selective sets, a third rarely rules out more, and every
    # literal kept is one more the index looks for in every text.
    found = [n for n in found if all(lit.strip() for lit in n) and _selective(n)[0] > 1]
    ranked = sorted(set(found), key=_selective, reverse=True)
    return tuple(ranked[:1] + [n for n in ranked[1:2] if _selective(n)[0] >= 3])


class _Index:
    """Every literal the screening patterns require, as one regex that finds
    at each position of a folded text the longest literal starting there (the
    literals are laid out as a trie, so a position costs a few character
    comparisons, not one per literal). A literal found implies its prefixes
    that are literals too: those are added from `prefixes`."""

    def __init__(self, literals: set[str]) -> None:
        self.literals = frozenset(literals)
        self.prefixes = {
            lit: frozenset(lit[:i] for i in range(1, len(lit) + 1) if lit[:i] in literals)
            for lit in literals
        }
        self.regex = re.compile("(?=(" + _trie(sorted(literals)) + "))", re.S)

    def present(self, text: str) -> frozenset[str]:
        found: set[str] = set()
        for literal in set(self.regex.findall(fold(text))):
            found |= self.prefixes[literal]
        return frozenset(found)


def _trie(words: list[str]) -> str:
    """A regex matching the longest of `words` at a position (words sorted)."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in node.items() if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        # Greedy: the longer word first, the shorter one if it ends here.
        return f"(?:{body})?" if ends else body

    return emit(tree)


_lock = threading.Lock()
_index: _Index | None = None
_registered: set[str] = set()
_local = threading.local()


def register(*rules: list[re.Pattern[str]] | tuple[re.Pattern[str], ...]) -> None:
    """Make the literals of these rules part of the index when it is built
    (at import, so that the first screen builds it once, not once per rule)."""
    for patterns in rules:
        _registered.update(_rule(patterns).literals)


def _current_index(literals: frozenset[str]) -> _Index:
    global _index
    index = _index
    if index is None or not literals <= index.literals:
        with _lock:
            index = _index
            if index is None or not literals <= index.literals:
                known = set(index.literals) if index else set()
                index = _index = _Index(known | _registered | literals)
    return index


def _present(text: str, rule: _Rule) -> frozenset[str]:
    # The battery runs rule after rule over the same few texts (a turn and its
    # readings): keep what each holds, per thread (requests run in threads).
    index = _index
    if index is None or rule.index is not index:
        index = rule.index = _current_index(rule.literals)
    cache: dict[str, tuple[_Index, frozenset[str]]] | None = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    entry = cache.get(text)
    if entry is None or entry[0] is not index:
        if len(cache) >= 32:
            cache.clear()
        entry = cache[text] = (index, index.present(text))
    return entry[1]


class _Rule:
    """One list of patterns, indexed by the literal each is first let through
    by; the pattern's other literal sets are checked after."""

    __slots__ = ("always", "by_literal", "index", "literals", "needs", "patterns", "source")

    def __init__(self, source: Any) -> None:
        self.source = source  # keeps the list alive, so its id is not reused
        self.patterns = tuple(source)
        self.needs = [required(p) for p in self.patterns]
        self.always = tuple(i for i, need in enumerate(self.needs) if not need)
        by_literal: dict[str, list[int]] = {}
        for i, need in enumerate(self.needs):
            for literal in need[0] if need else ():
                by_literal.setdefault(literal, []).append(i)
        self.by_literal = {lit: tuple(ids) for lit, ids in by_literal.items()}
        self.literals = frozenset(lit for need in self.needs for n in need for lit in n)
        self.index: _Index | None = None  # the index last known to hold them


_rules: dict[int, _Rule] = {}


def _rule(patterns: list[re.Pattern[str]] | tuple[re.Pattern[str], ...]) -> _Rule:
    # Keyed by the list itself (the rules are module constants): hashing the
    # patterns would hash their whole source text on every call.
    rule = _rules.get(id(patterns))
    if rule is None or rule.source is not patterns:
        rule = _rules[id(patterns)] = _Rule(patterns)
    return rule


@contextmanager
def disabled() -> Iterator[None]:
    """Every pattern run on every text, as without this module (the tests
    compare the two)."""
    global _enabled
    _enabled = False
    try:
        yield
    finally:
        _enabled = True


_enabled = True


def live(
    patterns: list[re.Pattern[str]] | tuple[re.Pattern[str], ...], text: str
) -> list[re.Pattern[str]]:
    """The patterns of `patterns` that may match `text`: the others cannot."""
    rule = _rule(patterns)
    if not _enabled:
        return list(rule.patterns)
    present = _present(text, rule)
    hit = present & rule.by_literal.keys()
    if not hit:
        return [rule.patterns[i] for i in rule.always]
    ids = set(rule.always)
    for literal in hit:
        ids.update(
            i
            for i in rule.by_literal[literal]
            if all(not need.isdisjoint(present) for need in rule.needs[i][1:])
        )
    return [rule.patterns[i] for i in sorted(ids)]
