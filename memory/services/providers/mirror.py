"""Write mirroring: facts Engram saved, copied to the providers that ask
for them (mirror_writes) and allow the fact's space.

Off the write path: `after_commit()` only schedules a Celery task (on its
own queue, engram_site/celery.py) once the write has committed, and nothing
it does can fail the write: a broker that refuses the message, a provider
that is down, a tool that errors are logged and dropped. Each fact is named
engram/<space>/<id> at the provider, which is how prefetch keeps a space
from ever seeing another space's mirrored facts."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction

from memory.services import providers
from memory.services.providers import client, discovery
from memory.services.providers.config import Provider

log = logging.getLogger(__name__)


def targets(space_name: str) -> list[Provider]:
    return [p for p in providers.configured() if p.mirror_writes and p.allows(space_name)]


def key(space_name: str, item_id: int) -> str:
    return f"engram/{space_name}/{item_id}"


def after_commit(*, space_name: str, item_ids: Sequence[int]) -> None:
    """Schedule the mirroring of these items once the transaction commits
    (now, outside one). Does nothing when no provider mirrors this space."""
    ids = [int(i) for i in item_ids if i]
    if not ids or not targets(space_name):
        return

    def send() -> None:
        from memory.tasks import mirror_to_providers

        try:
            mirror_to_providers.delay(space_name, ids)
        except Exception:  # a broker hiccup must not reach the write
            log.exception("mirroring of items %s not scheduled", ids)

    transaction.on_commit(send)


def mirror(*, space_name: str, item_ids: Sequence[int]) -> dict[str, int]:
    """Copy the live items to each mirroring provider: {provider: sent}."""
    from memory.models import MemoryItem

    # Only what is still live and not quarantined: mirroring runs later,
    # and a fact forgotten meanwhile must not leave.
    items = list(
        MemoryItem.objects.filter(
            pk__in=list(item_ids),
            space__name=space_name,
            status=MemoryItem.Status.ACTIVE,
            expired_at=None,
            screen_status=MemoryItem.Screen.OK,
        ).values_list("pk", "text")
    )
    sent: dict[str, int] = {}
    for provider in targets(space_name):
        sent[provider.name] = 0
        try:
            tools = client.list_tools(provider)
        except client.ProviderError as exc:
            log.warning("mirror to %s skipped: %s", provider.name, exc.detail)
            continue
        tool = discovery.pick(tools, provider.mirror_tool, discovery.SAVE_TOOLS)
        if tool is None:
            log.warning("mirror to %s skipped: no save tool (set mirror_tool)", provider.name)
            continue
        for pk, text in items:
            arguments = discovery.save_arguments(tool, key=key(space_name, pk), text=text)
            if arguments is None:
                log.warning("mirror to %s skipped: %s takes no text", provider.name, tool.name)
                break
            try:
                answer = client.call_tool(provider, tool.name, arguments)
            except client.ProviderError as exc:
                log.warning("mirror of item %s to %s failed: %s", pk, provider.name, exc.detail)
                continue
            if answer.is_error:
                log.warning("mirror of item %s to %s refused", pk, provider.name)
                continue
            sent[provider.name] += 1
    return sent
