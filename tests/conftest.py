"""Shared fixtures: a space with an API key and a client that sends it."""

from __future__ import annotations

import os

import pytest
from django.test import Client

from memory.models import Space
from memory.services.spaces import create_api_key

# Rate limits off for the suite, which sends hundreds of requests a minute
# with one key and from one address; tests/foundation/test_rate_limit.py
# turns them on. The variable reaches the servers integration tests start.
os.environ.setdefault("ENGRAM_RATE_LIMIT", "off")
os.environ.setdefault("ENGRAM_RATE_LIMIT_ANONYMOUS", "off")


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):  # type: ignore[no-untyped-def]
    settings.RATE_LIMIT = None
    settings.RATE_LIMIT_ANONYMOUS = None


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
