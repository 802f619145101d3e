"""Spaces and their API keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from engram_site.db import prepared, rows
from memory.models import ApiKey, Space

KEY_PREFIX = "eng_"
# The space `engram_run` makes the first key for: the operator's own, the one
# space that sees the server host unless told otherwise.
DEFAULT_SPACE = "default"
# Touch last_used_at at most this often, so authentication stays a read.
_LAST_USED_GRANULARITY = timedelta(minutes=5)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def get_or_create_space(*, name: str) -> Space:
    space, _ = Space.objects.get_or_create(
        name=name, defaults={"host_access": name == DEFAULT_SPACE}
    )
    return space


def set_host_access(*, space: Space, allowed: bool, actor: str) -> bool:
    """Let the space's keys see the server host (or stop them); audited.
    Returns whether anything changed."""
    from memory.services import audit

    with transaction.atomic():
        changed = bool(
            Space.objects.filter(pk=space.pk)
            .exclude(host_access=allowed)
            .update(host_access=allowed)
        )
        if changed:
            audit.record(
                space=space,
                action="host_access",
                target_type="space",
                target_id=space.pk,
                actor=actor,
                allowed=allowed,
            )
    space.host_access = allowed
    return changed


class SpaceKindError(ValueError):
    """A space's kind does not allow what was asked (e.g. linking a project
    key to a space that is not a user space)."""


def _kind(space: Space, kind: str | None, *, created: bool, default: str) -> Space:
    # An existing space keeps its kind unless one is named: a key made for it
    # later must not silently turn a person's space into a project's.
    wanted = kind or (default if created else None)
    if wanted and wanted != space.kind:
        if wanted not in Space.Kind.values:
            raise SpaceKindError(f"kind must be one of {', '.join(Space.Kind.values)}")
        Space.objects.filter(pk=space.pk).update(kind=wanted)
        space.kind = wanted
    return space


@transaction.atomic
def create_api_key(
    *,
    space_name: str,
    name: str = "",
    kind: str | None = None,
    user_space_name: str | None = None,
) -> tuple[ApiKey, str]:
    """Create (the space if needed and) a key; returns the row and the only
    copy of the plain key, which is never stored. With `user_space_name` the
    key is linked to that user space (created if needed): the space is then
    a project space, and reads fuse both."""
    space, created = Space.objects.get_or_create(
        name=space_name, defaults={"host_access": space_name == DEFAULT_SPACE}
    )
    user_space = None
    if user_space_name:
        if user_space_name == space_name:
            raise SpaceKindError("--user-space must name another space than --space")
        space = _kind(space, kind, created=created, default=Space.Kind.PROJECT)
        # A shared space (a team's) links like a project's: its members each
        # bring their own user space, so one person's memory never reaches
        # another through it.
        if space.kind not in (Space.Kind.PROJECT, Space.Kind.SHARED):
            raise SpaceKindError(
                f"space {space_name!r} is a {space.kind} space; only a project or shared "
                "space's key may be linked to a user space (pass --kind project to make it one)"
            )
        user_space, made = Space.objects.get_or_create(name=user_space_name)
        if not made and user_space.kind != Space.Kind.USER:
            raise SpaceKindError(
                f"space {user_space_name!r} is a {user_space.kind} space, not a user space"
            )
    else:
        space = _kind(space, kind, created=created, default=Space.Kind.USER)
    prefix = secrets.token_hex(4)
    plain = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        space=space, user_space=user_space, name=name, prefix=prefix, key_hash=_hash(plain)
    )
    return key, plain


def authenticate(plain: str) -> ApiKey | None:
    """The active key for a bearer token, with its space and linked user
    space loaded, or None. Constant-time comparison; keys are high-entropy
    random strings, so a fast hash is enough. One hand-written statement:
    every API request runs it, and the ORM's select_related took 25 times
    longer to build than to run (engram_site/db/rows.py)."""
    if not plain.startswith(KEY_PREFIX) or plain.count("_") < 2:
        return None
    prefix = plain[len(KEY_PREFIX) :].split("_", 1)[0]
    conn = connections[DEFAULT_DB_ALIAS]
    with prepared.cursor(conn) as cursor:
        statement = _statements.get(conn.vendor) or _statements.setdefault(
            conn.vendor, _key_statement(conn)
        )
        cursor.execute(statement, [prefix])
        row = cursor.fetchone()
    if row is None:
        return None
    n, m = rows.width(ApiKey), rows.width(Space)
    key = rows.instance(ApiKey, row[:n], conn)
    if not hmac.compare_digest(key.key_hash, _hash(plain)):
        return None
    key.space = rows.instance(Space, row[n : n + m], conn)
    key.user_space = rows.instance(Space, row[n + m :], conn) if key.user_space_id else None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > _LAST_USED_GRANULARITY:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


_statements: dict[str, str] = {}  # by database vendor


def _key_statement(conn: BaseDatabaseWrapper) -> str:
    """The active key of a prefix with its space and (left-joined) user space."""
    qn = conn.ops.quote_name
    keys, spaces = qn(ApiKey._meta.db_table), qn(Space._meta.db_table)
    return (
        f"SELECT {rows.columns(ApiKey, 'k', conn)}, {rows.columns(Space, 's', conn)}, "
        f"{rows.columns(Space, 'u', conn)} FROM {keys} k "
        f"JOIN {spaces} s ON s.id = k.space_id "
        f"LEFT JOIN {spaces} u ON u.id = k.user_space_id "
        "WHERE k.prefix = %s AND k.revoked_at IS NULL"
    )


def revoke_api_key(*, key: ApiKey) -> None:
    ApiKey.objects.filter(pk=key.pk, revoked_at=None).update(revoked_at=timezone.now())
