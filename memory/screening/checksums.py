"""Check digits of the numbers redaction looks for. A number that only has the
shape of a card, an IBAN or an identity number (an order id, a build number)
fails its check digit nine times in ten, so checking keeps look-alikes."""

from __future__ import annotations

import datetime as dt

# Length of each country's IBAN (ISO 13616 registry), so a truncated or
# padded number is not taken for one.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24,
    "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def card_network(digits: str) -> bool:
    """Whether the number starts like a card of a network that issues cards
    of its length (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay,
    Maestro)."""
    n = len(digits)
    two, four = int(digits[:2]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return n == 16
    if two in (34, 37):
        return n == 15
    if digits.startswith("6011") or two == 65 or 644 <= int(digits[:3]) <= 649:
        return n in (16, 19)
    if 3528 <= four <= 3589:
        return 16 <= n <= 19
    if 300 <= int(digits[:3]) <= 305 or two in (36, 38, 39):
        return 14 <= n <= 19
    if two == 62 or two == 50 or 56 <= two <= 69:
        return 12 <= n <= 19
    return False


def iban(value: str) -> bool:
    code = value.replace(" ", "").upper()
    if IBAN_LENGTHS.get(code[:2]) != len(code) or not code.isalnum():
        return False
    moved = code[4:] + code[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def verhoeff(digits: str) -> bool:
    """India's Aadhaar check digit."""
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


def cn_resident_id(value: str) -> bool:
    """Mainland China's 18-character resident identity number: a real birth
    date at 7-14 and the ISO 7064 MOD 11-2 check character."""
    code = value.upper()
    try:
        dt.date(int(code[6:10]), int(code[10:12]), int(code[12:14]))
    except ValueError:
        return False
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(code[i]) * w for i, w in enumerate(weights))
    return "10X98765432"[total % 11] == code[17]


def fr_nir(value: str) -> bool:
    """France's social security number (NIR): 13 characters and a two-digit
    key, 97 minus the number modulo 97 (Corsica's 2A/2B count as 19/18)."""
    code = value.replace(" ", "").upper()
    body, key = code[:13], code[13:]
    body = body[:5] + body[5:7].replace("2A", "19").replace("2B", "18") + body[7:]
    if not body.isdigit() or not key.isdigit():
        return False
    return 97 - int(body) % 97 == int(key)
