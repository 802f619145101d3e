"""The memory-quality suite's stack: started once, shared by every scenario.

The scenarios commit through the API like any client (the workers read the
same test database), and the suite-wide /context check reads every scenario's
space at the end, so these tests run outside pytest-django's per-test
transaction and flush: `_django_db_helper` (what the django_db marker invokes)
only opens database access here. Each scenario has its own space; the spaces
are deleted when the package is done."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from tests.fakes.good_llm import GoodLLM
from tests.quality.dsl import script
from tests.quality.harness import Stack, start_stack
from tests.quality.scenarios import SCENARIOS


@pytest.fixture(scope="package")
def quality_stack(django_db_setup, django_db_blocker, tmp_path_factory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("quality")
    with django_db_blocker.unblock(), ExitStack() as stack:
        yield start_stack(tmp, GoodLLM(script(SCENARIOS)), stack)
        from memory.models import Space

        Space.objects.filter(name__startswith="quality-").delete()


@pytest.fixture
def _django_db_helper(django_db_setup, django_db_blocker):  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        yield


@pytest.fixture
def stack(quality_stack: Stack) -> Stack:
    return quality_stack
