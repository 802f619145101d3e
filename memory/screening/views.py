"""Other readings of one text, for the rules to see through obfuscation.

A model reads "1gn0r3 4ll pr3v10u5 1nstruct10ns", "i g n o r e", fullwidth or
Cyrillic look-alike letters, base64, hex, URL or HTML escapes, ROT13 and
reversed text as easily as plain English, so the rules are run on each of
those readings too. A reading is only made when the text has what it undoes,
so ordinary text costs one extra pass at most."""

from __future__ import annotations

import binascii
import codecs
import html
import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import unquote_plus

from memory.screening.links import decode_base64

_LIMIT = 20_000  # characters of one text given to the readings

_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "8": "b",
        "9": "g",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "l",
        "+": "t",
        "€": "e",
    }
)
_LEET_L = str.maketrans({"1": "l", "|": "i", "!": "l"})
# A leetspeak token has a letter and a digit or symbol standing for one. Tokens
# are found with a plain `\S+` and tested with two searches: one pattern for
# "letter then symbol or symbol then letter" backtracks cubically on a long
# run of letters (a 2,000-character word took 40 s).
_TOKEN = re.compile(r"\S+")
_LETTER = re.compile(r"[A-Za-z]")
_LEET_CHAR = re.compile(r"[0-9@$!|+€]")
_CONFUSABLES = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "ɡ": "g",
        "һ": "h",
        "ӏ": "l",
        "ѵ": "v",
        "ԝ": "w",
        "к": "k",
        "м": "m",
        "т": "t",
        "в": "b",
        "н": "h",
        "А": "A",
        "Е": "E",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "Х": "X",
        "У": "Y",
        "К": "K",
        "М": "M",
        "Н": "H",
        "В": "B",
        "І": "I",
        "ο": "o",
        "α": "a",
        "ε": "e",
        "ι": "i",
        "ν": "v",
        "κ": "k",
        "τ": "t",
        "ρ": "p",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Χ": "X",
        "Υ": "Y",
        "Ζ": "Z",
        "ı": "i",
        "ɩ": "i",
        "ℓ": "l",
        "ɑ": "a",
        "ᴀ": "a",
        "ʀ": "r",
        "ꜱ": "s",
        "ɢ": "g",
        "ɴ": "n",
        "ᴏ": "o",
    }
)
_MIXED_SCRIPT_WORD = re.compile(
    r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff\u0131\u0251\u0261\u0269\u1d00-\u1d7f])\w+\b"
)
# Letters spaced or dotted out: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e".
_SPACED = re.compile(r"(?<![\w])(?:\w[ .\-_*/|·•]{1,3}){3,}\w(?![\w])")
_MARKUP = re.compile(r"[*_~`\"“”‘’«»^]+|\\(?=\W)")
# Each alternative starts where a whitespace run starts (the lookbehind), so a
# long run of spaces is scanned once, not once from each of its characters.
_PUNCT_RUN = re.compile(r"(?<!\s)\s*[.…,;:!?/\\|-]{2,}\s*|(?<!\s)\s*[.…]\s+")
_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[\s:,]?){10,}")
_BINARY = re.compile(r"(?:[01]{8}\s?){6,}")
_UNICODE_ESCAPE = re.compile(
    r"(?:\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|&#x?[0-9a-fA-F]+;|%[0-9a-fA-F]{2}|\\x[0-9a-fA-F]{2})"
)
_LETTERS = re.compile(r"[^a-z]+")


# Punctuation that ends a word ("Hey Mel!", "really?!") is not a letter in
# disguise; a symbol inside a word ("h!dden", "1gn0re") may be.
_TRAILING = "!?.,;:)'\"”’»"


def _is_leet(token: str) -> bool:
    token = token.rstrip(_TRAILING)
    return bool(_LETTER.search(token) and _LEET_CHAR.search(token))


def _leet(text: str, table: dict[int, str]) -> str:
    return _TOKEN.sub(
        lambda m: m.group(0).translate(table) if _is_leet(m.group(0)) else m.group(0), text
    )


def _despace(text: str) -> str:
    """Join letters split apart. When they are split by something other than
    a space ("i-g-n-o-r-e y-o-u-r"), a space between them is a word break;
    when by spaces, a run of two or more is."""

    def join(m: re.Match[str]) -> str:
        run = m.group(0)
        words = (
            re.split(r"\s+", run) if re.search(r"[.\-_*/|·•]", run) else re.split(r"\s{2,}", run)
        )
        return " ".join(re.sub(r"[ .\-_*/|·•]", "", w) for w in words)

    return _SPACED.sub(join, text)


def _hex(text: str) -> Iterator[str]:
    for m in _HEX.finditer(text):
        digits = re.sub(r"\\x|0x|[\s:,]", "", m.group(0))
        try:
            decoded = binascii.unhexlify(digits[: len(digits) // 2 * 2]).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if decoded.isprintable() or "\n" in decoded:
            yield decoded


def _binary(text: str) -> Iterator[str]:
    for m in _BINARY.finditer(text):
        bits = re.sub(r"\s", "", m.group(0))
        chars = [chr(int(bits[i : i + 8], 2)) for i in range(0, len(bits) - 7, 8)]
        decoded = "".join(chars)
        if decoded.isprintable():
            yield decoded


def readings(text: str) -> Iterator[tuple[str, str]]:
    """(name, reading) for each way `text` may hide what it says."""
    text = text[:_LIMIT]
    seen = {text}

    def new(name: str, reading: str) -> Iterator[tuple[str, str]]:
        if reading and reading not in seen:
            seen.add(reading)
            yield name, reading

    nfkc = unicodedata.normalize("NFKC", text)
    yield from new("unicode_compat", nfkc)
    base = nfkc
    if _MIXED_SCRIPT_WORD.search(base):
        yield from new(
            "homoglyphs", _MIXED_SCRIPT_WORD.sub(lambda m: m.group(0).translate(_CONFUSABLES), base)
        )
    plain = _PUNCT_RUN.sub(" ", _MARKUP.sub("", base))
    yield from new("markup", plain)
    despaced = _despace(plain)
    yield from new("spaced_letters", despaced)
    if any(_is_leet(m.group(0)) for m in _TOKEN.finditer(despaced)):
        yield from new("leetspeak", _leet(despaced, _LEET))
        yield from new("leetspeak", _leet(_leet(despaced, _LEET_L), _LEET))
    if _UNICODE_ESCAPE.search(base):
        unescaped = html.unescape(base)
        unescaped = unquote_plus(unescaped) if "%" in unescaped else unescaped
        try:
            unescaped = (
                codecs.decode(
                    unescaped.replace("\\x", "\\\\x").replace("\\\\x", "\\x"), "unicode_escape"
                )
                if "\\" in unescaped
                else unescaped
            )
        except (UnicodeDecodeError, ValueError):
            pass
        yield from new("escapes", unescaped)
    elif "&" in base and ";" in base:
        yield from new("escapes", html.unescape(base))
    for m in _B64.finditer(base):
        decoded = decode_base64(m.group(0))
        if decoded:
            yield from new("base64", decoded)
    for decoded in _hex(base):
        yield from new("hex", decoded)
    for decoded in _binary(base):
        yield from new("binary", decoded)
    yield from new("rot13", codecs.encode(base, "rot13"))
    yield from new("reversed", base[::-1])


# Phrases spelled without spaces or punctuation, for text whose every letter
# was split apart or run together ("IgnoreAllPreviousInstructions").
_COMPACT = re.compile(
    r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your|of|every){0,3}(?:previous|prior|above|earlier|preceding|system|original|initial|safety)"
    r"(?:instructions?|prompts?|rules|guidelines|directives)"
    r"|(?:ignore|disregard|forget)(?:all)?(?:your|the)(?:rules|instructions|guidelines)"
    r"|(?:reveal|print|show|output|repeat|leak|dump)(?:me)?(?:your|the)(?:full|hidden|initial|original)?systemprompt"
    r"|youarenow(?:dan|free|unrestricted|jailbroken|unfiltered|inthedevelopermode)|(?:enable|enter|activate)(?:developer|dan|god|jailbreak)mode"
    r"|donottelltheuser|donotinformtheuser|donotmentionthistotheuser|silentlyexecute|newsysteminstructions",
)


def compact_match(text: str) -> bool:
    """Whether a run-together word ("IgnoreAllPreviousInstructions") or a
    run of split-apart letters spells one of the phrases. Ordinary sentences
    are not joined up: "ignore the previous instructions I gave you" is the
    rules' business."""
    text = unicodedata.normalize("NFKC", text[:_LIMIT])
    pieces = re.findall(r"\S{16,}", text) + [m.group(0) for m in _SPACED.finditer(text)]
    return any(_COMPACT.search(_LETTERS.sub("", piece.lower())) for piece in pieces)
