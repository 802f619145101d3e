"""External memory providers (design doc §5 L6): any memory server that
speaks MCP, attached through ENGRAM_PROVIDERS, additive and never
load-bearing.

- config.py: the setting, checked at start-up;
- client.py: one live MCP connection per provider per process, calls
  bounded by time and guarded by the circuit breaker (breaker.py);
- prefetch.py: recall asks the prefetch providers in parallel with its own
  channels and fuses their answers as channel `provider:<name>`;
- proxy.py: a tools provider's tools, listed and called as `<name>.<tool>`;
- mirror.py: saved facts copied to a provider after commit, on a queue of
  their own.

Nothing here may fail a request: a provider that is late, down or refused
by its breaker is reported in `degraded` and left out.

This module imports nothing: settings.py loads config.py before the apps."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.services.providers.config import Provider


def configured() -> tuple[Provider, ...]:
    from django.conf import settings

    return tuple(settings.ENGRAM.get("PROVIDERS", ()))


def named(name: str) -> Provider | None:
    return next((p for p in configured() if p.name == name), None)
