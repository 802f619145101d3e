"""Secrets and personal data in incoming text become `[REDACTED:kind]` before
anything is stored or sent to an LLM.

`redact()` works on text, `redact_json()` on JSON values (turn metadata,
imported files, environment reports), where a value under a key named like
a secret (`"password": "..."`) is redacted whole. Which kinds are redacted
is `ENGRAM_REDACT` (see `enabled_kinds`). Redacting twice changes nothing:
no rule matches inside a marker or across one.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memory.screening import credentials, pii
from memory.screening.rules import Rule, apply

# Order matters: whole structured secrets first (a PEM body, a JWT, a vendor
# key), then passwords inside URLs and headers, then `key = value`, then
# personal data, so a later, looser rule never sees the pieces of an earlier
# one's secret.
RULES: list[Rule] = credentials.RULES + pii.RULES


def _kinds(rules: Iterable[Rule]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k for r in rules for k in r.kinds))


SECRET_KINDS = _kinds(credentials.RULES)
PII_KINDS = _kinds(pii.RULES)
KINDS = SECRET_KINDS + PII_KINDS
GROUPS: dict[str, tuple[str, ...]] = {
    "all": KINDS,
    "secrets": SECRET_KINDS,
    "pii": PII_KINDS,
    "national_id": ("ssn", "cn_id", "uk_nino", "aadhaar", "pan", "fr_nir"),
    "cards": ("card", "card_cvv"),
}


@functools.lru_cache(maxsize=32)
def parse_kinds(spec: tuple[str, ...]) -> frozenset[str]:
    """The kinds an `ENGRAM_REDACT` list turns on: kind or group names
    (`all`, `secrets`, `pii`, `national_id`, `cards`) add, `-name` removes,
    `none` clears; a list that starts with a removal starts from `all`."""
    items = [s.strip().lower() for s in spec if s.strip()]
    enabled: set[str] = set(KINDS) if not items or items[0].startswith("-") else set()
    for item in items:
        name = item.lstrip("-")
        if name == "none":
            enabled.clear()
            continue
        members = GROUPS.get(name) or ((name,) if name in KINDS else None)
        if members is None:
            raise ImproperlyConfigured(
                f"ENGRAM_REDACT: unknown kind {name!r}; use all, none, "
                f"{', '.join(g for g in GROUPS if g != 'all')} or one of {', '.join(KINDS)}"
            )
        if item.startswith("-"):
            enabled.difference_update(members)
        else:
            enabled.update(members)
    return frozenset(enabled)


def enabled_kinds() -> frozenset[str]:
    return parse_kinds(tuple(settings.ENGRAM.get("REDACT", ["all"])))


def redact(text: str, kinds: Collection[str] | None = None) -> str:
    """Replace secrets and personal data in `text` with `[REDACTED:kind]`."""
    if not text:
        return text
    enabled = enabled_kinds() if kinds is None else kinds
    if len(text) <= _SHORT and isinstance(enabled, frozenset):
        return _redact_short(text, enabled)
    return _redact(text, enabled)


def _redact(text: str, enabled: Collection[str]) -> str:
    for r in RULES:
        text = apply(text, r, enabled)
    return text


# Short strings repeat: the keys and enum-like values of every audit event's
# details ("extractor": "rules", "neighbours", "reason") go through redaction
# on each write, each time through every rule, inside the write lock.
_SHORT = 48


@functools.lru_cache(maxsize=4096)
def _redact_short(text: str, enabled: frozenset[str]) -> str:
    return _redact(text, enabled)


def redact_json(
    value: Any,
    kinds: Collection[str] | None = None,
    *,
    keep_keys: Collection[str] = (),
    _key: str = "",
) -> Any:
    """`redact` every string of a JSON value, keys included. A string or
    number under a key named like a secret ("password", "client_secret",
    "x-api-key") is replaced whole: no text around it says it is secret.
    Values under `keep_keys` (identifiers, digests) are left as they are."""
    enabled = enabled_kinds() if kinds is None else kinds
    if _key and _key in keep_keys:
        return value
    if isinstance(value, str):
        kind = credentials.key_kind(_key) if _key else None
        if kind in enabled and credentials.looks_secret(value, mode="quoted"):
            return f"[REDACTED:{kind}]"
        return redact(value, enabled)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        kind = credentials.key_kind(_key) if _key else None
        return f"[REDACTED:{kind}]" if kind == "password" and kind in enabled else value
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            new_key = redact(k, enabled) if isinstance(k, str) else k
            while new_key in out:  # two keys redacted alike must not overwrite each other
                new_key = f"{new_key}~"
            key = k if isinstance(k, str) else ""
            out[new_key] = redact_json(v, enabled, keep_keys=keep_keys, _key=key)
        return out
    if isinstance(value, list | tuple):
        return [redact_json(v, enabled, keep_keys=keep_keys, _key=_key) for v in value]
    return value
