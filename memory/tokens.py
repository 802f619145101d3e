"""A token estimate that needs no tokenizer download.

Budgets for core memory and the prompt context are enforced in code, so the
estimate must be cheap, deterministic and never far below what a real BPE
tokenizer counts. It errs a little high: a budget that is slightly too strict
is harmless, one that lets the prompt overflow is not.

- CJK ideographs, kana and Hangul syllables: one token per character (BPE
  vocabularies of current models spend about one token per Chinese character
  and often more for rarer ones).
- Latin, Greek and similar words: one token per four characters, at least one.
- Scripts that BPE vocabularies cover thinly (Cyrillic, Arabic, Indic, Thai,
  ...): one token per two characters.
- Digits: one token per three; every other non-space symbol: one token.
"""

from __future__ import annotations

import re

# Han (incl. extensions A and compatibility), kana, Hangul, CJK punctuation and
# full-width forms: counted per character.
_CJK = (
    "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
    "\U00020000-\U0002fa1f"
)
_PIECE = re.compile(
    rf"(?P<cjk>[{_CJK}])"
    r"|(?P<latin>[A-Za-z\u00c0-\u024f\u0370-\u03ff']+)"
    r"|(?P<digits>[0-9]+)"
    r"|(?P<other>[^\W\d_]+)"  # letters of any remaining script
    r"|(?P<symbol>[^\s])"
)


def estimate_tokens(text: str) -> int:
    """Estimated token count of `text` for a modern BPE tokenizer."""
    if not text:
        return 0
    total = 0
    # findall's tuples, not match objects: a third less time (/context counts
    # every part it puts in the prompt). max(1, ceil(n / d)) is (n + d - 1) // d
    # for the non-empty pieces these are.
    for cjk, latin, digits, other, symbol in _PIECE.findall(text):
        if latin:
            total += (len(latin) + 3) // 4
        elif cjk or symbol:
            total += 1
        elif digits:
            total += (len(digits) + 2) // 3
        else:
            total += (len(other) + 1) // 2
    return total


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of whole lines of `text` within `budget` tokens; a
    first line that alone is too long is cut at a character boundary."""
    if estimate_tokens(text) <= budget:
        return text
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        cost = estimate_tokens(line) + (1 if kept else 0)
        if used + cost > budget:
            if not kept:
                # Binary search the longest prefix of this one line that fits.
                lo, hi = 0, len(line)
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if estimate_tokens(line[:mid]) <= budget:
                        lo = mid
                    else:
                        hi = mid - 1
                kept.append(line[:lo])
            break
        kept.append(line)
        used += cost
    return "\n".join(kept)
