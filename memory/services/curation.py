"""What a curator (or an agent) does to one entry by hand: correct its text,
or release it from quarantine. Every path that does so (the memory_update
tool, the Django admin) calls these, so a correction is always a new version
that supersedes the old one with its history kept, and a release is always
audited with the reasons the screen gave."""

from __future__ import annotations

from django.db import transaction

from memory.errors import Invalid
from memory.models import MemoryItem, PalaceEntry, Space
from memory.screening import screen_fact
from memory.services import audit, facts
from memory.services.palace import slots as palace_slots


def check(*, old: MemoryItem, text: str) -> str:
    """The text `old` would be corrected to (screened), or Invalid: an entry
    that is not live, or a text the screen flags."""
    if not old.is_live:
        raise Invalid(
            f"id: item {old.pk} is not live ({old.status}); only a live entry is corrected"
        )
    # The old entry's kind decides the screen: a standing instruction gets the
    # strict one.
    screened = screen_fact(text.strip(), kind=old.kind, importance=old.importance)
    if screened.flagged:
        raise Invalid(f"text: refused by the injection screen ({', '.join(screened.reasons)})")
    if not screened.text:
        raise Invalid("text: nothing is left of it after screening")
    return screened.text


def correct(*, space: Space, old: MemoryItem, text: str, actor: str, source: str) -> MemoryItem:
    """A new version of `old` with `text`, superseding it. A correction is
    what was true all along: the new version keeps the old one's kind,
    subject, importance and the time it became true, and the old version ends
    where it began, so an as_of read in its window sees the corrected text.
    Raises Invalid for an entry that is not live or a text the screen flags."""
    text = check(old=old, text=text)
    with transaction.atomic():
        new = MemoryItem.objects.create(
            space=space,
            text=text,
            kind=old.kind,
            subject=old.subject,
            predicate=old.predicate,
            object="",
            importance=old.importance,
            source=source,
            source_session=old.source_session,
            disposition="UPDATE",
            content_hash=facts.content_hash(text),
            valid_from=old.valid_from,
            stated_at=old.stated_at,
            metadata={"corrects": old.pk},
        )
        facts.supersede(old=old, new=new, actor=actor)
        # Made here, not by the write path's _create: it gets its room#slot
        # the same way (not enrolled in review: the entry is not new).
        palace_slots.place_item(new, enrol=False)
        audit.record(
            space=space,
            action="update",
            target_type="item",
            target_id=new.pk,
            actor=actor,
            replaces=old.pk,
        )
        facts.link_item(space=space, item=new)
    transaction.on_commit(lambda: facts.embed_later(space_id=space.pk, item_ids=[new.pk]))
    return new


def release(*, item: MemoryItem, actor: str) -> bool:
    """A curator judged a quarantined entry harmless: it is recalled from now
    on, joins the graph and is embedded. The screen's reasons stay in the
    audit log. False when the entry was not quarantined."""
    if item.screen_status != MemoryItem.Screen.FLAGGED:
        return False
    with transaction.atomic():
        released = MemoryItem.objects.filter(
            pk=item.pk, screen_status=MemoryItem.Screen.FLAGGED
        ).update(screen_status=MemoryItem.Screen.OK)
        if not released:
            return False
        reasons = list(item.screen_reasons or [])
        item.screen_status = MemoryItem.Screen.OK
        audit.record(
            space=item.space_id,
            action="release",
            target_type="item",
            target_id=item.pk,
            actor=actor,
            reasons=reasons,
        )
        if item.is_live:
            facts.link_item(space=item.space, item=item)
            if not PalaceEntry.objects.filter(item=item).exists():
                # Quarantined entries are never slotted; live now, it gets
                # its room#slot (not enrolled in review: it is not new).
                palace_slots.place_item(item, enrol=False)
    transaction.on_commit(lambda: facts.embed_later(space_id=item.space_id, item_ids=[item.pk]))
    return True
