"""Step 6: identity-grade facts about the user become core-memory patch
proposals. The rules (importance >= 0.8, about the user, screened, within the
block's cap) live in memory.services.core; this step calls it and never lets a
refusal or error there fail the job."""

from __future__ import annotations

import logging

from django.db import transaction

from memory.models import MemoryItem, Space

log = logging.getLogger(__name__)

IDENTITY_IMPORTANCE = 0.8


def propose(*, space: Space, item: MemoryItem) -> bool:
    if item.importance < IDENTITY_IMPORTANCE or item.screen_status != MemoryItem.Screen.OK:
        return False
    if item.status != MemoryItem.Status.ACTIVE or item.expired_at is not None:
        return False
    from memory.services.core import propose_from_fact

    try:
        with transaction.atomic():
            return bool(propose_from_fact(space=space, item=item))
    except Exception:
        log.warning("core-memory proposal for item %s failed", item.pk, exc_info=True)
        return False
