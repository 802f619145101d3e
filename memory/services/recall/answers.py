"""What kind of answer a question asks for, and whether a turn holds one.

"Which city did Ana visit?" or "What film did Tom see?" asks for a name:
the turn answering it names something ("a short trip to Lisbon", "we saw
"Casablanca" again"), while turns that only share the question's words ("I
love visiting new cities") do not. The turn channel lifts the turns that
name something the question does not already name (channels.NAME_BOOST)."""

from __future__ import annotations

import re
from collections.abc import Collection

# "which/what [one or two words] <a thing that has a name>", or "where ...".
_ASKS_NAME = re.compile(
    r"^\s*where\b|\b(?:which|what)\b(?:\s+\w+){0,2}?\s+(?:"
    r"books?|novels?|movies?|films?|shows?|series|songs?|bands?|artists?|authors?|"
    r"games?|teams?|brands?|titles?|names?|restaurants?|"
    r"cit(?:y|ies)|countr(?:y|ies)|states?|towns?|places?|parks?"
    r")\b",
    re.IGNORECASE,
)
# A title in quotes, or a capitalised word inside a sentence (after a
# lowercase letter or a comma: a sentence's first word and "I" are not names).
_NAME = re.compile(r"[\"“][^\"”]{2,60}[\"”]|(?<=[a-z,;:] )[A-Z][a-z][\w'-]*")
_WORD = re.compile(r"\w+")


def asks_for_name(question: str) -> bool:
    return bool(_ASKS_NAME.search(question or ""))


def names_something(text: str, *, known: Collection[str]) -> bool:
    """The text names something besides `known` (lowercase words: the
    question's own, the speakers')."""
    for found in _NAME.finditer(text or ""):
        if any(w not in known for w in _WORD.findall(found.group(0).lower())):
            return True
    return False
