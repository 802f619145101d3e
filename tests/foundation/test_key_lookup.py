"""The API key lookup reads its key and spaces with one hand-written
statement (memory.services.spaces.authenticate, engram_site/db/rows.py): what
it gives must equal what the ORM gives, field by field, on both databases."""

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
