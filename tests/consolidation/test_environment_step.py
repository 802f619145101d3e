"""The consolidator's environment step probes the server host only for a
space with host access, and once for a sweep over many of them."""

from __future__ import annotations

import pytest

from consolidation.jobs import environment
from consolidation.jobs._common import StepContext
from environment.models import EnvironmentSnapshot
from memory.models import Space

pytestmark = pytest.mark.django_db


def ctx(space: Space) -> StepContext:
    return StepContext(space=space, run_id=None, since=None, max_llm_calls=0)


def probes() -> int:
    return EnvironmentSnapshot.objects.filter(space=None, source="probe").count()


def test_a_space_without_host_access_skips_the_server_probe() -> None:
    tenant = Space.objects.create(name="tenant-no-host", host_access=False)
    result = environment.run(ctx(tenant))
    assert probes() == 0
    assert result.counts == {"refreshed": 0, "drift": 0}


def test_the_server_is_probed_once_for_many_spaces_with_host_access() -> None:
    spaces = [Space.objects.create(name=f"ops-{i}", host_access=True) for i in range(3)]
    results = [environment.run(ctx(s)) for s in spaces]
    assert probes() == 1
    assert [r.counts["refreshed"] for r in results] == [1, 0, 0]
