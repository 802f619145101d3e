"""Personal data: e-mail addresses, phone numbers, payment cards and their
CVV, IBANs and national identity numbers.

Numbers are taken only in the shapes people write them in (E.164, the usual
national groupings of the US, UK, Germany, France, India and China) and,
where the number has one, only with a valid check digit; dates, versions, IP
addresses, ids and digests keep their digits.
"""

from __future__ import annotations

import re

from memory.screening import checksums
from memory.screening.rules import Rule, checked, rule

# Digits not glued to a longer number, word, path or version.
_NB = r"(?<![A-Za-z0-9_+./\\-])(?<!\d[ .-])"
_NA = r"(?![A-Za-z0-9_/\\-]|[.,]\d|[ .-]\d)"

# --- e-mail ------------------------------------------------------------------------

# Suffixes of file names written like addresses (icon@2x.png), not domains.
_FILE_SUFFIXES = frozenset("png jpg jpeg gif svg webp ico bmp tiff pdf js ts css map lock".split())


def _email(value: str) -> bool:
    return value.rsplit(".", 1)[-1].lower() not in _FILE_SUFFIXES


EMAIL = rule(
    "email",
    r"(?<![A-Za-z0-9._%+-])(?<!://)[A-Za-z0-9._%+-]*[A-Za-z0-9_%+-]@"  # not a URL's user@host
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}"
    r"(?![A-Za-z0-9-]|\.[A-Za-z0-9]|:[\w~/.])",  # not an scp path (git@host:org/repo)
    find=checked("email", _email),
)

# --- payment cards -----------------------------------------------------------------


def _card(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    if len(set(re.findall(r"[ -]", value))) > 1:
        return False  # mixed separators: not how a card is written
    return 13 <= len(digits) <= 19 and checksums.card_network(digits) and checksums.luhn(digits)


CARDS: list[Rule] = [
    rule(
        "card",
        r"(?<![A-Za-z0-9_.,/-])(?:\d{13,19}|\d{4}(?:[ -]\d{4}){2}[ -]\d{1,7}|\d{4}[ -]\d{6}[ -]\d{4,5})"
        r"(?![A-Za-z0-9_/-]|[.,]\d)",
        find=checked("card", _card),
    ),
    # The CVV: labelled, or the last field of "card | expiry | cvv".
    rule(
        "card_cvv",
        r"(?i)\b(?:cvv2?|cvc2?|csc|cav2|security\s+code|card\s+verification(?:\s+(?:value|code))?)"
        r"\b[^\d\n]{0,12}?(?<!\d)(\d{3,4})(?!\d)",
        find=checked("card_cvv", lambda v: True, 1),
    ),
    rule(
        "card_cvv",
        r"(?i)\[REDACTED:card\]\s*[,|;/ ]\s*(?:exp\w*\s*[:.]?\s*)?(?:0[1-9]|1[0-2])\s*/\s*\d{2,4}"
        r"\s*[,|;/ ]\s*(\d{3,4})(?!\d)",
        find=checked("card_cvv", lambda v: True, 1),
    ),
]

# --- IBAN --------------------------------------------------------------------------


def _iban(m: re.Match[str]) -> tuple[int, int, str] | None:
    """The longest prefix of the match that is a valid IBAN: a following
    word may have been taken for its last group."""
    text = m.group(0)
    for cut in range(len(text), 14, -1):
        candidate = text[:cut].rstrip()
        if len(candidate) != cut:
            continue
        if checksums.iban(candidate):
            return m.start(), m.start() + cut, "iban"
    return None


IBAN = Rule(
    kinds=("iban",),
    pattern=re.compile(
        r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])",
        re.I,
    ),
    find=_iban,
)

# --- national identity numbers ----------------------------------------------------------


def _ssn(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return (
        len(digits) == 9
        and area not in ("000", "666")
        and not area.startswith("9")
        and group != "00"
        and serial != "0000"
    )


NATIONAL_IDS: list[Rule] = [
    # Mainland China resident identity number (18 characters, check character).
    rule(
        "cn_id",
        r"(?<![0-9A-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
        r"\d{3}[\dXx](?![0-9A-Za-z])",
        find=checked("cn_id", checksums.cn_resident_id),
    ),
    # US Social Security number: 123-45-6789, or any grouping after "SSN".
    rule("ssn", _NB + r"\d{3}-\d{2}-\d{4}" + _NA, find=checked("ssn", _ssn)),
    rule(
        "ssn",
        r"(?i)\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?|ss#)\W{0,5}"
        r"(\d{3}[ -]?\d{2}[ -]?\d{4})(?!\d)",
        find=checked("ssn", _ssn, 1),
    ),
    # France: NIR (numéro de sécurité sociale), 13 digits and a key.
    rule(
        "fr_nir",
        r"(?<![\d])[12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?!\d)",
        find=checked("fr_nir", checksums.fr_nir),
    ),
    # India: Aadhaar (12 digits, Verhoeff) grouped 4-4-4, or bare after its name.
    rule(
        "aadhaar",
        r"(?<![\d-])(?<!\d )[2-9]\d{3}([ -])\d{4}\1\d{4}(?![\d-]|[ -]\d)",
        find=checked("aadhaar", lambda v: checksums.verhoeff(re.sub(r"\D", "", v))),
    ),
    rule(
        "aadhaar",
        r"(?i)(?:aadhaa?r|आधार|\buidai?\b)\D{0,15}(?<!\d)([2-9]\d{11})(?!\d)",
        find=checked("aadhaar", checksums.verhoeff, 1),
    ),
    # India: PAN (five letters, the fourth the holder type, four digits, a letter).
    rule("pan", r"(?<![A-Za-z0-9])[A-Z]{3}[PCHFATBLJG][A-Z]\d{4}[A-Z](?![A-Za-z0-9])"),
    # UK National Insurance number.
    rule(
        "uk_nino",
        r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
        r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])",
    ),
]

# --- phone numbers -----------------------------------------------------------------


def _digits(value: str) -> str:
    return re.sub(r"\D", "", value)


def _international(value: str) -> bool:
    digits = _digits(value)
    if value.startswith("00"):
        digits = digits[2:]
    return 8 <= len(digits) <= 15


def _national(value: str) -> bool:
    """Trunk-prefixed national numbers (UK, DE, FR, IN, ...): 0, then a
    non-zero digit, 9 to 12 digits in all."""
    digits = _digits(value)
    return 9 <= len(digits) <= 12 and digits[1] != "0"


def _separated_consistently(value: str) -> bool:
    seps = set(re.findall(r"[ .\-/]", re.sub(r"^\(\d+\)", "", value)))
    return len(seps) <= 1 or seps == {" ", "-"}


PHONES: list[Rule] = [
    # E.164 and 00-prefixed international: +44 20 7946 0958, +1 (415) 555-2671.
    rule(
        "phone",
        r"(?<![A-Za-z0-9_+])(?:\+|00)[1-9]\d{0,3}(?:[ .-]?\(\d{1,5}\)|[ .-]?\d{1,5}){1,6}" + _NA,
        find=checked("phone", _international),
    ),
    # US/Canada: (415) 555-2671, 415-555-2671, 415.555.2671, 1-800-555-0199.
    rule(
        "phone",
        _NB + r"(?:1[ .-])?(?:\([2-9]\d{2}\)[ ]?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}" + _NA,
        find=checked("phone", _separated_consistently),
    ),
    # Trunk-prefixed national numbers: 020 7946 0958, 030 12345678, 089/1234567,
    # 01 23 45 67 89, 06.12.34.56.78, 098765 43210, (030) 1234567, 07700900123.
    rule(
        "phone",
        _NB + r"(?:\(0[1-9]\d{0,4}\)[ .-]?\d{2,8}(?:[ .\-/]\d{2,8}){0,3}"
        r"|0[1-9]\d{0,4}(?:[ .\-/]\d{2,8}){1,4}|0[1-9]\d{8,10})" + _NA,
        find=checked("phone", lambda v: _national(v) and _separated_consistently(v)),
    ),
    # Mainland China mobiles (13800138000, 138 0013 8000) and Indian mobiles
    # written without the trunk 0 (98765 43210).
    rule(
        "phone",
        _NB + r"(?:1[3-9]\d(?:[ -]?\d{4}){2}|[6-9]\d{4}[ -]\d{5})" + _NA,
        find=checked("phone", _separated_consistently),
    ),
    # Any other grouping right after a word that says it is a phone number.
    rule(
        "phone",
        r"(?i)\b(?:phone|mobile|cell|tel|telephone|fax|whatsapp|sms|call\s+me\s+(?:at|on)|"
        r"telefon|handy|téléphone|portable|手机|电话|फ़ोन|मोबाइल)\b[^\d+\n]{0,12}"
        r"((?:\+|\b)\d[\d ().-]{6,18}\d)" + _NA,
        find=checked("phone", lambda v: 8 <= len(_digits(v)) <= 15, 1),
    ),
]

RULES: list[Rule] = [EMAIL, *CARDS, IBAN, *NATIONAL_IDS, *PHONES]
