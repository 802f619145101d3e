"""The circuit breaker on its own: thresholds, cool-down, the one probe."""

from __future__ import annotations

import time

import pytest

from memory.services.providers import breaker


@pytest.fixture(autouse=True)
def _limits(settings):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {
        **settings.ENGRAM,
        "PROVIDER_BREAKER_FAILURES": 2,
        "PROVIDER_BREAKER_SECONDS": 0.2,
    }
    breaker.reset()
    yield
    breaker.reset()


def test_opens_after_consecutive_failures_only() -> None:
    breaker.failure("p", "boom")
    breaker.success("p", 3.0)
    breaker.failure("p", "boom")
    assert breaker.allow("p")
    breaker.failure("p", "boom again")
    assert not breaker.allow("p")
    s = breaker.status("p")
    assert (s.state, s.failures, s.last_error) == (breaker.OPEN, 2, "boom again")


def test_one_probe_after_the_cool_down() -> None:
    breaker.failure("p", "x")
    breaker.failure("p", "x")
    assert not breaker.allow("p")
    time.sleep(0.25)
    assert breaker.status("p").state == breaker.HALF_OPEN
    assert breaker.allow("p")  # the probe
    assert not breaker.allow("p")  # and no other call meanwhile
    breaker.failure("p", "still down")
    assert not breaker.allow("p")  # open again at once
    time.sleep(0.25)
    assert breaker.allow("p")
    breaker.success("p", 5.0)
    assert breaker.status("p").state == breaker.CLOSED
    assert breaker.allow("p") and breaker.allow("p")


def test_a_lost_probe_does_not_hold_the_circuit() -> None:
    breaker.failure("p", "x")
    breaker.failure("p", "x")
    time.sleep(0.25)
    assert breaker.allow("p")  # a probe whose outcome is never reported
    assert not breaker.allow("p")
    time.sleep(0.25)
    assert breaker.allow("p")
