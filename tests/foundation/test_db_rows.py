"""Hot reads written by hand (engram_site/db/rows.py): the API key lookup
(memory.services.spaces.authenticate), rows.first and rows.values must give
what the ORM gives, field by field, on both databases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.models import ApiKey, Space
from memory.services.spaces import authenticate, create_api_key, revoke_api_key


def _fields(obj: object) -> dict[str, object]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_the_key_and_both_spaces_equal_the_orms() -> None:
    key, plain = create_api_key(space_name="proj", user_space_name="me")
    Space.objects.filter(name="proj").update(
        host_access=True, last_activity_at=timezone.now() - timedelta(days=3, microseconds=7)
    )
    found = authenticate(plain)
    assert found is not None
    orm = ApiKey.objects.select_related("space", "user_space").get(pk=key.pk)
    assert _fields(found) == _fields(orm)
    assert _fields(found.space) == _fields(orm.space)
    assert found.user_space is not None and orm.user_space is not None
    assert _fields(found.user_space) == _fields(orm.user_space)
    # Types as the ORM gives them, not as the database stores them.
    assert found.space.host_access is True
    assert found.space.last_activity_at is not None
    assert found.space.last_activity_at.tzinfo is not None
    assert found.space.palace_backlog_at == orm.space.palace_backlog_at


@pytest.mark.django_db
def test_an_unlinked_key_has_no_user_space_and_costs_one_statement() -> None:
    _, plain = create_api_key(space_name="solo")
    authenticate(plain)  # touches last_used_at once
    with CaptureQueriesContext(connection) as queries:
        found = authenticate(plain)
        assert found is not None
        assert found.space.name == "solo"
        assert found.user_space is None and found.user_space_id is None
    assert len(queries) == 1


@pytest.mark.django_db
def test_wrong_secret_revoked_and_unknown_keys_are_refused() -> None:
    key, plain = create_api_key(space_name="s")
    assert authenticate(plain[:-2] + ("aa" if not plain.endswith("aa") else "bb")) is None
    assert authenticate("eng_deadbeef_nothing") is None
    assert authenticate("not-a-key") is None
    revoke_api_key(key=key)
    assert authenticate(plain) is None


@pytest.mark.django_db
def test_first_and_values_equal_the_orms_with_json_and_datetimes(space: Space) -> None:
    from engram_site.db import rows
    from environment.models import EnvironmentSnapshot
    from memory.models import PalaceEntry

    for n in range(3):
        EnvironmentSnapshot.objects.create(
            space=space, source="agent", hostname=f"h{n}", data={"os": "linux", "n": n, "ok": True}
        )
    found = rows.first(
        EnvironmentSnapshot,
        "t.space_id = %s AND t.source = %s",
        [space.pk, "agent"],
        order="t.created_at DESC, t.id DESC",
    )
    orm = EnvironmentSnapshot.objects.filter(space=space).order_by("-created_at", "-id").first()
    assert found is not None and orm is not None
    assert _fields(found) == _fields(orm)
    assert found.data == {"os": "linux", "n": 2, "ok": True}
    assert rows.first(EnvironmentSnapshot, "t.space_id = %s", [space.pk + 1000]) is None

    PalaceEntry.objects.create(
        space=space, wing="fact", room_no=1, slot=1, placard="p", due_at=timezone.now()
    )
    names = ("item_id", "wing", "slot", "due_at", "placard_unique")
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT item_id, wing, slot, due_at, placard_unique FROM "memory_palaceentry" '
            "WHERE space_id = %s",
            [space.pk],
        )
        got = rows.values(PalaceEntry, names, cursor.fetchall(), connection)
    assert got == list(PalaceEntry.objects.filter(space=space).values(*names))
    assert got[0]["placard_unique"] is True and got[0]["due_at"].tzinfo is not None


@pytest.mark.django_db
def test_every_equals_the_orms(space: Space) -> None:
    from engram_site.db import rows
    from memory.models import CoreBlock

    other = Space.objects.create(name="other")
    for s, label, text in (
        (space, "user", "Name: Ada"),
        (space, "agent", "x"),
        (other, "user", "y"),
    ):
        CoreBlock.objects.create(space=s, label=label, text=text, budget_tokens=100)
    found = rows.every(CoreBlock, "t.space_id = %s", [space.pk])
    orm = CoreBlock.objects.filter(space=space)
    assert sorted(map(_fields, found), key=str) == sorted(map(_fields, orm), key=str)
    assert rows.every(CoreBlock, "t.space_id = %s", [other.pk + 1000]) == []
