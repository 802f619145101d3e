"""Prefetch: recall asks every prefetch provider allowed for the space, in
parallel with its own channels, and waits for them only until the recall
time budget allows (ENGRAM_RECALL_TIMEOUT, less what recall needs after)
and never past a provider's own timeout. Each provider's answer becomes one
ranking, channel `provider:<name>`; a provider that is late, down or whose
circuit is open is named in `degraded` as `provider:<name>` and left out.

Answers are fetched for the request and never kept: a provider's result
appears only in the request of a space that may use that provider, and an
entry Engram mirrored there from another space (named engram/<space>/...)
is dropped."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from django.conf import settings

from engram_site import running
from memory.services import providers
from memory.services.providers import client, discovery, results
from memory.services.providers.config import Provider

log = logging.getLogger(__name__)

# Of the recall budget, the share prefetch may spend waiting; the rest is
# for fusing and loading rows, so a late provider never makes recall late.
BUDGET_SHARE = 0.6
MIRROR_PREFIX = "engram/"


@dataclass(frozen=True)
class Found:
    provider: str
    items: list[results.Item]


def channel(name: str) -> str:
    return f"provider:{name}"


def wanted(space_name: str) -> list[Provider]:
    return [p for p in providers.configured() if p.prefetch and p.allows(space_name)]


def _search_op(
    provider: Provider, query: str
) -> Callable[[client.Connection], Awaitable[list[results.Item]]]:
    async def op(conn: client.Connection) -> list[results.Item]:
        tools = await client.list_tools_on(conn)
        tool = discovery.pick(tools, provider.search_tool, discovery.SEARCH_TOOLS)
        if tool is None:
            raise client.ProviderError(
                provider.name, "no search tool (set search_tool)", unavailable=False
            )
        arguments = discovery.search_arguments(tool, query, provider.limit)
        if arguments is None:
            raise client.ProviderError(
                provider.name, f"{tool.name} takes no text argument", unavailable=False
            )
        answer = await client.call_on(conn, tool.name, arguments)
        if answer.is_error:
            raise client.ProviderError(provider.name, results.error_text(answer), unavailable=False)
        return results.read(answer)[: provider.limit]

    return op


def start(space_names: Sequence[str], query: str) -> list[client.Pending]:
    """Ask the providers the asking space may use (the key's own space,
    space_names[0]); answers are collected by collect()."""
    if not space_names:
        return []
    return [client.start(p, _search_op(p, query)) for p in wanted(space_names[0])]


def _own(item: results.Item, space_names: Sequence[str]) -> bool:
    """Not an entry mirrored from a space outside this request."""
    if not item.id.startswith(MIRROR_PREFIX):
        return True
    space = item.id[len(MIRROR_PREFIX) :].split("/", 1)[0]
    return space in space_names


def collect(
    pending: list[client.Pending], *, started: float, space_names: Sequence[str]
) -> tuple[list[Found], list[str]]:
    """(what each provider found in time, the channels degraded)."""
    found: list[Found] = []
    degraded: list[str] = []
    if pending:
        running.step_aside()  # waiting on the providers, not computing
    budget = float(settings.ENGRAM["RECALL_TIMEOUT_SECONDS"]) * BUDGET_SHARE
    for p in pending:
        deadline = started + min(budget, p.provider.timeout)
        try:
            items = p.result(deadline - time.monotonic())
        except client.ProviderError as exc:
            log.warning("prefetch from provider %s left out: %s", exc.provider, exc.detail)
            degraded.append(channel(p.provider.name))
            continue
        found.append(Found(p.provider.name, [i for i in items if _own(i, space_names)]))
    return found, degraded
