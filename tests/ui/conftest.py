"""A curator and a space with some memory in it, made through the services."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from memory.models import MemoryItem, Space
from memory.services.facts import save_fact


@pytest.fixture
def curator(db):  # type: ignore[no-untyped-def]
    return get_user_model().objects.create_user(
        "curator", password="a-long-test-password", is_staff=True
    )


@pytest.fixture
def staff_client(client, curator):  # type: ignore[no-untyped-def]
    client.force_login(curator)
    return client


@pytest.fixture
def memory(space: Space) -> dict[str, MemoryItem]:
    old = save_fact(
        space=space,
        text="Anna lives in Porto.",
        subject="Anna",
        predicate="lives_in",
        object="Porto",
    ).item
    new = save_fact(
        space=space,
        text="Anna lives in Lisbon.",
        subject="Anna",
        predicate="lives_in",
        object="Lisbon",
    ).item
    tea = save_fact(
        space=space,
        text="The user prefers green tea.",
        subject="user",
        predicate="prefers",
        object="green tea",
        kind="preference",
    ).item
    assert old and new and tea
    return {"old": old, "new": new, "tea": tea}
