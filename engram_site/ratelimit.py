"""Request rate limits for the API: a fixed-window counter per API key, and
one per client address for requests that carry no valid key (so a flood of
guessed keys is limited as well as a runaway agent).

The counters live in the Django cache, so every worker process and every
machine behind one Redis counts together: Redis when ENGRAM_REDIS_URL is
set, otherwise the SQLite cache file in the data directory
(engram_site/cache.py), whose `incr` is atomic across processes. A window
is one cache key, `rl:<bucket>:<window number>`, that expires with the
window.

A fixed window lets up to twice the limit through across a window boundary;
for a guard against floods that is fine, and it costs one increment per
request."""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured

log = logging.getLogger(__name__)

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$")
_OFF = {"", "0", "off", "none", "false", "no"}


@dataclass(frozen=True)
class Rate:
    limit: int  # requests allowed per window
    window: int  # seconds

    def __str__(self) -> str:
        return f"{self.limit}/{self.window}s"


def parse_rate(name: str, value: str) -> Rate | None:
    """`600/min`, `20/s`, `10000/hour`, `100/10s`; off, none or 0 is None."""
    text = value.strip().lower()
    if text in _OFF:
        return None
    match = _RATE.match(text)
    unit = _UNITS.get(match.group(3).rstrip("s") or "s") if match else None
    if match is None or unit is None or int(match.group(1)) < 1:
        raise ImproperlyConfigured(
            f"{name} must be like 600/min, 20/s or 10000/hour (or off), got {value!r}"
        )
    window = unit * int(match.group(2) or 1)
    if window < 1:
        raise ImproperlyConfigured(f"{name}: the window must be at least one second")
    return Rate(limit=int(match.group(1)), window=window)


class RateLimited(Exception):
    """Over the limit: answer 429 with Retry-After."""

    def __init__(self, rate: Rate, retry_after: int, *, what: str) -> None:
        super().__init__(f"{what} exceeded {rate}")
        self.rate = rate
        self.retry_after = retry_after
        self.what = what

    @property
    def detail(self) -> str:
        return (
            f"rate limit exceeded for this {self.what}: at most {self.rate.limit} requests "
            f"per {self.rate.window} s; retry after {self.retry_after} s"
        )


def _count(bucket: str, rate: Rate) -> tuple[int, int]:
    """This window's count for the bucket after adding one, and the seconds
    until the window ends."""
    now = time.time()
    window = int(now // rate.window)
    key = f"rl:{bucket}:{rate.window}:{window}"
    cache = caches[settings.RATE_LIMIT_CACHE]
    try:
        count = cache.incr(key)
    except ValueError:  # the window's first request (or the key expired)
        # add() is atomic: of two first requests one adds, the other counts.
        count = 1 if cache.add(key, 1, timeout=rate.window + 1) else cache.incr(key)
    retry_after = max(1, math.ceil((window + 1) * rate.window - now))
    return count, retry_after


_warned_at = -math.inf


def check(bucket: str, rate: Rate | None, *, what: str) -> None:
    """Count one request against the bucket; raise RateLimited when over.

    A cache that cannot be reached lets the request through (and logs it):
    the limit protects the server, and refusing every request because Redis
    is down would be the outage it is meant to prevent."""
    if rate is None:
        return
    try:
        count, retry_after = _count(bucket, rate)
    except Exception:  # the cache backend's own errors (Redis down, disk full)
        global _warned_at
        if time.monotonic() - _warned_at > 60:  # once a minute, not once a request
            _warned_at = time.monotonic()
            log.warning("rate limits not checked: the cache is unavailable", exc_info=True)
        return
    if count > rate.limit:
        raise RateLimited(rate, retry_after, what=what)


def check_key(key_prefix: str) -> None:
    check(f"key:{key_prefix}", settings.RATE_LIMIT, what="API key")


def check_address(address: str) -> None:
    check(f"ip:{address}", settings.RATE_LIMIT_ANONYMOUS, what="client address")
