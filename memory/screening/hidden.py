"""Hidden Unicode: characters a reader does not see but a model reads.

Invisible characters smuggle text past a human reviewer (tag characters that
spell ASCII, runs of zero-width characters encoding bits, variation-selector
runs) or hide a keyword from the rules (`ig\u200bnore`). They are stripped,
and the smuggling uses flag the text. The legitimate uses are kept intact:

- a zero-width joiner between emoji builds one emoji (👩‍💻, 👨‍👩‍👧, 🏳️‍🌈);
- ZWJ and ZWNJ shape Arabic, Persian and Indic scripts (می‌خواهم, क्‍ष);
- tag characters after 🏴 spell a subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland);
- one variation selector after a character picks its glyph (❤️, 葛󠄀);
- left-to-right and right-to-left marks order mixed-direction text.
"""

from __future__ import annotations

import re

ZWJ = "\u200d"
ZWNJ = "\u200c"
# Invisible, never needed in chat text: always stripped.
_INVISIBLE = frozenset(
    "\u200b\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u034f\u115f\u1160\u3164\uffa0"
    "\u17b4\u17b5\ufff9\ufffa\ufffb"
)
_ZERO_WIDTH = _INVISIBLE | {ZWJ, ZWNJ}
# Embeddings, overrides and isolates reorder what a reader sees (Trojan Source).
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
_BIDI_MARK = frozenset("\u200e\u200f\u061c")
_TAG_FIRST, _TAG_LAST = 0xE0000, 0xE007F
_CANCEL_TAG = "\U000e007f"
_BLACK_FLAG = "\U0001f3f4"
_SUBDIVISION = re.compile(
    _BLACK_FLAG + "([\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6})" + _CANCEL_TAG
)
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
# A run this long of invisible characters carries data, not formatting.
_SMUGGLING_RUN = 3


def _is_emoji(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x1F000 <= cp <= 0x1FAFF
        or 0x2600 <= cp <= 0x27BF
        or 0x2300 <= cp <= 0x23FF
        or 0x2B00 <= cp <= 0x2BFF
        or cp in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D)
    )


def _is_modifier(ch: str) -> bool:
    """Skin tones and emoji/text variation selectors, which may sit between
    an emoji and the joiner after it."""
    cp = ord(ch)
    return 0x1F3FB <= cp <= 0x1F3FF or cp in (0xFE0E, 0xFE0F, 0x20E3)


def _joins_script(ch: str) -> bool:
    """Scripts whose spelling uses ZWJ/ZWNJ: Arabic and Persian, Syriac,
    the Indic scripts, Sinhala, Myanmar, Khmer."""
    cp = ord(ch)
    return (
        0x0600 <= cp <= 0x08FF
        or 0xFB50 <= cp <= 0xFEFC
        or 0x0900 <= cp <= 0x0DFF
        or 0x1000 <= cp <= 0x109F
        or 0x1780 <= cp <= 0x17FF
        or 0xA8E0 <= cp <= 0xA8FF
    )


def _is_variation_selector(ch: str) -> bool:
    cp = ord(ch)
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


def _selects(base: str, selector: str) -> bool:
    """Whether `selector` picks a glyph of `base`: the standardized selectors
    after any visible character, the ideographic ones after an ideograph."""
    if not base or base.isspace():
        return False
    if ord(selector) < 0xE0100:
        return True
    cp = ord(base)
    return 0x3400 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF


def _emoji_before(chars: list[str], i: int) -> bool:
    j = i - 1
    while j >= 0 and _is_modifier(chars[j]):
        j -= 1
    return j >= 0 and _is_emoji(chars[j])


def _legit_joiner(chars: list[str], i: int) -> bool:
    ch = chars[i]
    before = chars[i - 1] if i > 0 else ""
    after = chars[i + 1] if i + 1 < len(chars) else ""
    if ch == ZWJ and after and _is_emoji(after) and _emoji_before(chars, i):
        return True
    return bool((before and _joins_script(before)) or (after and _joins_script(after)))


def decode_tags(text: str) -> str:
    """The ASCII that tag characters spell (what the hidden message says)."""
    return "".join(
        chr(ord(ch) - _TAG_FIRST) for ch in text if _TAG_FIRST < ord(ch) < ord(_CANCEL_TAG)
    )


def strip_hidden(text: str) -> tuple[str, list[str]]:
    """`text` without hidden characters, and why it was suspicious. A lone
    invisible character (a stray ZWSP or BOM from copy and paste) is stripped
    without a flag; smuggling uses are flagged."""
    reasons: list[str] = []
    if not text:
        return text, reasons

    # Subdivision flags are the one legitimate use of tag characters: set them
    # aside, judge the rest.
    flags: list[str] = []

    def keep_flag(m: re.Match[str]) -> str:
        flags.append(m.group(0))
        return f"\x00{len(flags) - 1}\x00"

    if any(_TAG_FIRST <= ord(ch) <= _TAG_LAST for ch in text):
        text = _SUBDIVISION.sub(keep_flag, text)
        if any(_TAG_FIRST <= ord(ch) <= _TAG_LAST for ch in text):
            reasons.append("hidden_tag_characters")
            text = "".join(ch for ch in text if not _TAG_FIRST <= ord(ch) <= _TAG_LAST)

    if _BIDI_CONTROL.search(text):
        reasons.append("bidi_override")
        text = _BIDI_CONTROL.sub("", text)
    if not _RTL.search(text) and any(ch in _BIDI_MARK for ch in text):
        # Direction marks do nothing in left-to-right text except hide things.
        text = "".join(ch for ch in text if ch not in _BIDI_MARK)

    # Two or more variation selectors in a row select nothing: they encode data.
    text, runs = _SELECTOR_RUN.subn("", text)
    chars = list(text)
    out: list[str] = []
    stripped = run = longest = 0
    if runs:
        longest = _SMUGGLING_RUN
    for i, ch in enumerate(chars):
        if ch in _ZERO_WIDTH and not (ch in (ZWJ, ZWNJ) and _legit_joiner(chars, i)):
            stripped += 1
            run += 1
            longest = max(longest, run)
            continue
        if _is_variation_selector(ch) and not _selects(out[-1] if out else "", ch):
            stripped += 1
            continue
        run = 0
        out.append(ch)
    if longest >= _SMUGGLING_RUN:
        reasons.append("zero_width_smuggling")
    elif stripped:
        reasons.append("zero_width")
    text = "".join(out)
    for n, flag in enumerate(flags):
        text = text.replace(f"\x00{n}\x00", flag)
    return text, reasons
