"""A circuit breaker per provider, per process: after FAILURES consecutive
failures (errors or answers later than the provider's timeout) the provider
is not called for COOLDOWN seconds; then one call goes through as a probe,
and its outcome closes the circuit again or opens it for another cool-down.
A dead provider so costs recall nothing but a dictionary lookup.

It also keeps what the Ops view shows: state, last error, last latency."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half-open"


@dataclass
class Status:
    state: str = CLOSED
    failures: int = 0  # consecutive
    opened_until: float = 0.0  # time.monotonic()
    probing: bool = False
    probe_at: float = 0.0  # time.monotonic()
    calls: int = 0
    last_error: str = ""
    last_error_at: float | None = None  # time.time()
    last_latency_ms: float | None = None
    last_ok_at: float | None = None  # time.time()


_lock = threading.Lock()
_status: dict[str, Status] = {}


def _limits() -> tuple[int, float]:
    conf = settings.ENGRAM
    return int(conf["PROVIDER_BREAKER_FAILURES"]), float(conf["PROVIDER_BREAKER_SECONDS"])


def allow(name: str) -> bool:
    """Whether a call to the provider may go out now (and, once a cool-down
    is over, claim the one probe)."""
    _threshold, cooldown = _limits()
    now = time.monotonic()
    with _lock:
        s = _status.setdefault(name, Status())
        if s.state == CLOSED:
            return True
        # A probe whose outcome never came back (its caller failed first)
        # does not hold the circuit half-open for ever.
        stale_probe = s.state == HALF_OPEN and now - s.probe_at >= cooldown
        if (s.state == OPEN and now >= s.opened_until) or stale_probe:
            s.state, s.probing, s.probe_at = HALF_OPEN, True, now
            return True
        return False


def success(name: str, latency_ms: float) -> None:
    with _lock:
        s = _status.setdefault(name, Status())
        s.state, s.failures, s.probing = CLOSED, 0, False
        s.calls += 1
        s.last_latency_ms = round(latency_ms, 1)
        s.last_ok_at = time.time()


def failure(name: str, detail: str, latency_ms: float | None = None) -> None:
    threshold, cooldown = _limits()
    with _lock:
        s = _status.setdefault(name, Status())
        s.calls += 1
        s.failures += 1
        s.last_error, s.last_error_at = detail[:500], time.time()
        if latency_ms is not None:
            s.last_latency_ms = round(latency_ms, 1)
        if s.state == HALF_OPEN or s.failures >= threshold:
            s.state, s.probing = OPEN, False
            s.opened_until = time.monotonic() + cooldown


def status(name: str) -> Status:
    with _lock:
        s = _status.get(name) or Status()
        if s.state == OPEN and time.monotonic() >= s.opened_until:
            # Due for its probe: shown as such, claimed by the next call.
            return Status(**{**s.__dict__, "state": HALF_OPEN})
        return Status(**s.__dict__)


def reset(name: str | None = None) -> None:
    """Forget the outcomes (one provider, or all): a configuration change."""
    with _lock:
        if name is None:
            _status.clear()
        else:
            _status.pop(name, None)
