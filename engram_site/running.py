"""How many of a web worker's threads run views at once.

A worker keeps ENGRAM_WEB_THREADS threads (8) so that requests waiting on
something else (SQLite's write queue, an LLM, a provider, a slow client
reading a stream) do not hold back the ones queued behind them. But when the
requests are all busy computing, eight threads take turns on one
interpreter, and every switch costs: `bench_http` recall at 100k + 100k
(2 workers, 8 connections) served 15-20% fewer requests with 8 threads than
with 2 or 4, while `bench_faults --scenario load` (16 writers, 32 readers)
read 305 requests/s with 8 threads and 187 with 4, the readers queueing
behind writers that waited on the write lock.

So a request takes one of ENGRAM_WEB_RUNNING slots before its view runs
(`slot()`, in the WSGI bridge), and gives it up for good at the first wait
that is not computing (`step_aside()`): the write queue, an LLM or embedding
call, a provider's answer, a streamed answer. After that it runs without a
slot, so a thread that holds the write lock never waits for one (which could
deadlock with a slot holder waiting on that lock). A request waits at most
SLOT_WAIT seconds for a slot and then runs anyway, so a slow view that never
steps aside delays the others by that much at worst.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from django.conf import settings

SLOT_WAIT = 0.5  # seconds

_gates: dict[int, threading.BoundedSemaphore] = {}  # by size (settings may change)
_gates_lock = threading.Lock()
_held = threading.local()


def _gate() -> threading.BoundedSemaphore | None:
    size = settings.WEB_RUNNING
    if size <= 0:
        return None
    gate = _gates.get(size)
    if gate is None:
        with _gates_lock:
            gate = _gates.setdefault(size, threading.BoundedSemaphore(size))
    return gate


@contextlib.contextmanager
def slot() -> Iterator[None]:
    """Run the block holding a slot, or without one after SLOT_WAIT."""
    gate = _gate()
    _held.gate = gate if gate is not None and gate.acquire(timeout=SLOT_WAIT) else None
    try:
        yield
    finally:
        step_aside()


def step_aside() -> None:
    """Give up this thread's slot, if it holds one, before a wait."""
    gate = getattr(_held, "gate", None)
    if gate is not None:
        _held.gate = None
        gate.release()


def holding() -> bool:
    """Whether this thread holds a slot now."""
    return getattr(_held, "gate", None) is not None
