"""Shared fixtures: a space with an API key and a client that sends it."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.models import Space
from memory.services.spaces import create_api_key


@pytest.fixture(autouse=True)
def _eager_celery(settings):  # type: ignore[no-untyped-def]
    # In-process tests run tasks eagerly; integration tests start real
    # worker processes, which do not see this.
    from engram_site.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(scope="session", autouse=True)
def _close_helper_connections(django_db_setup, django_db_blocker):  # type: ignore[no-untyped-def]
    # Helper threads keep their database connection between tasks; PostgreSQL
    # will not drop the test database while they hold one.
    yield
    from engram_site.threads import close_all_connections

    with django_db_blocker.unblock():
        close_all_connections()


@pytest.fixture
def space(db) -> Space:  # type: ignore[no-untyped-def]
    return Space.objects.create(name="test-space")


@pytest.fixture
def api_key(space: Space) -> str:
    _, plain = create_api_key(space_name=space.name)
    return plain


@pytest.fixture
def client_for():  # type: ignore[no-untyped-def]
    """A Django test client authenticated for any key: client_for(key)."""

    def make(key: str) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    return make


@pytest.fixture
def api(api_key: str, client_for) -> Client:  # type: ignore[no-untyped-def]
    return client_for(api_key)
