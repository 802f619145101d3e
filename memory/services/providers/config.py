"""ENGRAM_PROVIDERS: the external memory servers Engram may talk to, read
and checked once at start-up (engram_site/settings.py). A bad entry stops
start-up with ImproperlyConfigured naming the variable and the entry, like
every other ENGRAM_* setting.

No Django imports beyond the exception: settings.py imports this module
before the apps are loaded."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

VARIABLE = "ENGRAM_PROVIDERS"
MODES = ("prefetch", "tools", "hybrid")
NAME = re.compile(r"^[a-z0-9_-]{1,40}$")
KEYS = {
    "name",
    "command",
    "url",
    "headers",
    "env",
    "mode",
    "timeout",
    "mirror_writes",
    "spaces",
    "search_tool",
    "mirror_tool",
    "limit",
}
DEFAULT_TIMEOUT = 1.0
DEFAULT_LIMIT = 5


@dataclass(frozen=True)
class Provider:
    """One external memory server: a stdio command or a Streamable HTTP URL."""

    name: str
    mode: str
    command: tuple[str, ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    mirror_writes: bool = False
    # Spaces allowed to use the provider (its results, its tools, mirroring);
    # empty: every space.
    spaces: frozenset[str] = frozenset()
    # The tool prefetch calls and the one mirroring calls; empty: found by
    # name among the provider's tools (prefetch.SEARCH_TOOLS, mirror.SAVE_TOOLS).
    search_tool: str = ""
    mirror_tool: str = ""
    limit: int = DEFAULT_LIMIT  # results taken from the provider per recall

    @property
    def prefetch(self) -> bool:
        return self.mode in ("prefetch", "hybrid")

    @property
    def tools(self) -> bool:
        return self.mode in ("tools", "hybrid")

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def target(self) -> str:
        """Where it is, as the Ops view shows it (no header values)."""
        return " ".join(self.command) if self.command else self.url

    def allows(self, space_name: str) -> bool:
        return not self.spaces or space_name in self.spaces


def _fail(index: int, detail: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{VARIABLE}[{index}]: {detail}")


def _strings(value: Any, index: int, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _fail(index, f"{key} must be an object of strings")
    return dict(value)


def _one(raw: Any, index: int) -> Provider:
    if not isinstance(raw, dict):
        raise _fail(index, "must be an object")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise _fail(
            index, f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})"
        )
    name = raw.get("name")
    # No "__": function-calling manifests join name and tool with it (proxy.py).
    if not isinstance(name, str) or not NAME.match(name) or "__" in name:
        raise _fail(index, f"name must match [a-z0-9_-]{{1,40}} without '__', got {name!r}")
    command, url = raw.get("command"), raw.get("url")
    if (command is None) == (url is None):
        raise _fail(index, f"{name}: give exactly one of command (stdio) or url (Streamable HTTP)")
    if command is not None and (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise _fail(index, f"{name}: command must be a non-empty list of strings")
    if url is not None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise _fail(index, f"{name}: url must be an http(s) URL, got {url!r}")
    headers = _strings(raw.get("headers", {}), index, "headers")
    if headers and command is not None:
        raise _fail(index, f"{name}: headers apply to a url provider only")
    env = _strings(raw.get("env", {}), index, "env")
    if env and url is not None:
        raise _fail(index, f"{name}: env applies to a command provider only")
    mode = raw.get("mode", "prefetch")
    if mode not in MODES:
        raise _fail(index, f"{name}: mode must be one of {', '.join(MODES)}, got {mode!r}")
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0.05 <= timeout <= 60
    ):
        raise _fail(index, f"{name}: timeout must be seconds between 0.05 and 60, got {timeout!r}")
    mirror = raw.get("mirror_writes", False)
    if not isinstance(mirror, bool):
        raise _fail(index, f"{name}: mirror_writes must be true or false")
    spaces = raw.get("spaces", [])
    if not isinstance(spaces, list) or not all(isinstance(s, str) and s for s in spaces):
        raise _fail(index, f"{name}: spaces must be a list of space names")
    limit = raw.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
        raise _fail(index, f"{name}: limit must be an integer between 1 and 50")
    tools = {}
    for key in ("search_tool", "mirror_tool"):
        value = raw.get(key, "")
        if not isinstance(value, str):
            raise _fail(index, f"{name}: {key} must be a tool name")
        tools[key] = value
    return Provider(
        name=name,
        mode=mode,
        command=tuple(command or ()),
        url=url or "",
        headers=tuple(sorted(headers.items())),
        env=tuple(sorted(env.items())),
        timeout=float(timeout),
        mirror_writes=mirror,
        spaces=frozenset(spaces),
        limit=limit,
        **tools,
    )


def parse(raw: Any) -> tuple[Provider, ...]:
    """The providers of ENGRAM_PROVIDERS' decoded JSON (a list), checked."""
    if raw in (None, ""):
        return ()
    if not isinstance(raw, list):
        raise ImproperlyConfigured(f"{VARIABLE} must be a JSON list of provider objects")
    found = tuple(_one(entry, i) for i, entry in enumerate(raw))
    names = [p.name for p in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ImproperlyConfigured(f"{VARIABLE}: provider names must be unique: {', '.join(twice)}")
    return found
