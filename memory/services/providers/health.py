"""What the Ops view shows of the external providers: each one's
configuration (no header or environment values), its circuit breaker's
state, last error and last latency in this process, and a connection test
that lists its tools. Answered, never raised."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memory.services import providers
from memory.services.providers import breaker, client, proxy

CHECK_SECONDS = 10.0


@dataclass(frozen=True)
class Check:
    ok: bool
    provider: str
    detail: str
    elapsed_ms: float
    tools: list[dict[str, str]] = field(default_factory=list)


def _when(stamp: float | None) -> datetime | None:
    return datetime.fromtimestamp(stamp, tz=UTC) if stamp else None


def rows() -> list[dict[str, Any]]:
    out = []
    for p in providers.configured():
        s = breaker.status(p.name)
        out.append(
            {
                "name": p.name,
                "mode": p.mode,
                "transport": p.transport,
                "target": p.target,
                "timeout": p.timeout,
                "mirror_writes": p.mirror_writes,
                "spaces": sorted(p.spaces),
                "header_names": [k for k, _ in p.headers],
                "state": s.state,
                "failures": s.failures,
                "calls": s.calls,
                "last_error": s.last_error,
                "last_error_at": _when(s.last_error_at),
                "last_latency_ms": s.last_latency_ms,
                "last_ok_at": _when(s.last_ok_at),
            }
        )
    return out


def check(name: str) -> Check:
    """List the provider's tools now (through its breaker, like any call)."""
    provider = providers.named(name)
    if provider is None:
        return Check(False, name, "no such provider is configured (ENGRAM_PROVIDERS)", 0.0)
    # A first connection may start a process: more time than a recall gets.
    limit = max(provider.timeout, CHECK_SECONDS)
    pending = client.start(
        provider, lambda conn: client.list_tools_on(conn, fresh=True), timeout=limit
    )
    try:
        tools = pending.result(limit + 0.5)
    except client.ProviderError as exc:
        return Check(False, name, exc.detail, _elapsed(pending))
    proxy.forget_listings()
    return Check(
        True,
        name,
        f"{len(tools)} tools",
        _elapsed(pending),
        [{"name": t.name, "description": (t.description or "")[:200]} for t in tools],
    )


def _elapsed(pending: client.Pending) -> float:
    return round((time.monotonic() - pending.started) * 1000, 1)
