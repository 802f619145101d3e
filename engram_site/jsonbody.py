"""Reading a JSON request body: the reason when it cannot be read, and the
values no database stores alike refused before any operation sees them."""

from __future__ import annotations

import json
import math
from functools import partial
from typing import Any

from django.conf import settings

from engram_site.bounds import INT64_MAX, INT64_MIN


class BodyError(Exception):
    """The body cannot be read as JSON; the message says why."""

    def __init__(self, detail: str, *, status: int = 400) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status


def read_object(raw: bytes) -> dict[str, Any]:
    """A JSON object body, or BodyError with the reason it cannot be read.

    ninja's own parser answers every failure with "Cannot parse request body";
    this one says whether the bytes are not UTF-8 or the JSON is broken, and
    where. It also refuses strings holding NUL (\\u0000): valid JSON, but
    PostgreSQL cannot store it, and SQLite would keep a text that the other
    backend then refuses."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(
            f"the body is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
            "cannot be decoded; send JSON encoded as UTF-8"
        ) from None
    suspect: list[str] = []
    try:
        data = json.loads(
            text,
            # NaN and Infinity are not JSON, though Python reads them.
            parse_constant=_refuse_constant,
            parse_int=partial(_int, suspect),
            parse_float=partial(_float, suspect),
        )
    except json.JSONDecodeError as exc:
        raise BodyError(
            f"the body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:  # deeper than Python's parser goes
        raise BodyError(_too_deep()) from None
    # Too deep first (a deep array is refused for its depth), and before
    # anything below walks the body recursively.
    _check_depth(data)
    if not isinstance(data, dict):
        # Every operation's body is an object; ninja would otherwise read
        # an array or a scalar as an empty body and take the defaults.
        raise BodyError(
            f"body: expected a JSON object of named arguments, got {_json_kind(data)}",
            status=422,
        )
    if suspect:
        where = _out_of_range_path(data)
        if where is not None:
            raise BodyError(
                f"{where or 'body'}: number out of range; integers must lie within "
                f"{INT64_MIN}..{INT64_MAX} and numbers must be finite",
                status=422,
            )
    if "\\u0000" in text.lower():
        where = _nul_path(data)
        if where is not None:
            raise BodyError(
                f"{where or 'body'}: text may not contain the NUL character (\\u0000)",
                status=422,
            )
    return data


def _too_deep() -> str:
    limit = settings.MAX_JSON_DEPTH
    return (
        f"the body nests objects and arrays more than {limit} levels deep; the limit is "
        f"{limit} (ENGRAM_MAX_JSON_DEPTH)"
    )


def _check_depth(data: Any) -> None:
    """Refuse bodies nested deeper than ENGRAM_MAX_JSON_DEPTH: every part of
    Engram that walks a body (screening, redaction, export) recurses, and
    no real turn, fact or import nests anywhere near the limit."""
    level = [data]
    depth = 0
    while level:
        depth += 1
        if depth > settings.MAX_JSON_DEPTH:
            raise BodyError(_too_deep())
        level = [
            child
            for value in level
            if isinstance(value, (dict, list))
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, (dict, list))
        ]


def _refuse_constant(name: str) -> Any:
    raise BodyError(f"the body is not valid JSON: {name} is not a JSON value")


def _int(suspect: list[str], literal: str) -> int:
    value = int(literal)
    if not INT64_MIN <= value <= INT64_MAX:
        suspect.append(literal)
    return value


def _float(suspect: list[str], literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 reads as infinity
        suspect.append(literal)
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"


def _out_of_range_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first number no database column or JSON
    document stores the same on SQLite and PostgreSQL, if any."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if INT64_MIN <= value <= INT64_MAX else path
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            found = _out_of_range_path(item, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _out_of_range_path(item, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None


def _nul_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (or key) holding NUL, if any."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return here
            found = _nul_path(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_path(item, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None
