"""Scopes: which spaces a key reads, and which one a write goes to.

A key reads its own space; a key linked to a user space (ApiKey.user_space)
reads that one too, fused into one ranking. Nothing else is ever readable:
the link is the only way a second space enters a request. Writes go to the
key's own space unless they ask for `scope: "user"`, which needs the link.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from engram_site.bounds import INT64_MAX
from memory.errors import EngramError
from memory.models import ApiKey, MemoryItem, Space

Scope = Literal["user", "project"]
SCOPES: tuple[str, ...] = ("user", "project")


def readable(space: Space, user_space: Space | None) -> tuple[Space, ...]:
    """The spaces a request reads, its own first. One space when unlinked,
    so an unlinked key costs what it always did."""
    if user_space is None or user_space.pk == space.pk:
        return (space,)
    return (space, user_space)


def linked_user_space(key: ApiKey | None) -> Space | None:
    if key is None or key.user_space_id is None:
        return None
    return key.user_space


def write_space(space: Space, user_space: Space | None, scope: str | None) -> Space:
    """The space a write with this `scope` lands in. Unset or "project": the
    key's own space. "user": the linked user space, or a 400 saying there is
    none (a silent fallback would file personal memory in the project)."""
    if scope is None or scope == "project":
        return space
    if scope != "user":
        raise EngramError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if user_space is None:
        raise EngramError(
            f'scope "user" needs a key linked to a user space; the key of space '
            f"{space.name!r} has none (create_api_key --space {space.name} --user-space U)"
        )
    return user_space


def core_scope(label: str, scope: str | None, user_space: Space | None) -> str | None:
    """The scope a core-memory edit defaults to: the user block of a linked
    key lives in the user space (/context reads it from there: identity
    follows the person), the agent block in the project."""
    if scope is None and label == "user" and user_space is not None:
        return "user"
    return scope


def space_for_item(spaces: Sequence[Space], item_id: object) -> Space:
    """The space a by-id operation on memory item `item_id` acts in, given
    a request's readable spaces (its own first): the linked user space when
    that one holds it, else the key's own space, where the operation's own
    lookup answers a missing id (or one of any unlinked space) not found
    exactly as it always has. The one place ids are resolved to a space."""
    own = spaces[0]
    raw = str(item_id).strip()
    if len(spaces) < 2 or not raw.isdigit() or int(raw) > INT64_MAX:
        return own  # unlinked: no query, the one space as always
    by_pk = {s.pk: s for s in spaces}
    found = (
        MemoryItem.objects.filter(pk=int(raw), space_id__in=list(by_pk))
        .values_list("space_id", flat=True)
        .first()
    )
    return by_pk.get(found, own) if found is not None else own
