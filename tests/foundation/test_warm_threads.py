"""The web views' pool hands the next task to the thread that finished last
(engram_site/warm_threads.py), never runs more threads than it may, queues
the rest, and reports a task's failure through its future."""

from __future__ import annotations

import threading
import time

import pytest

from engram_site.warm_threads import WarmThreadPool


def _thread() -> int:
    return threading.get_ident()


def _all_idle(pool: WarmThreadPool, threads: int) -> None:
    deadline = time.monotonic() + 10
    while len(pool._idle) < threads:
        assert time.monotonic() < deadline, "the pool's threads never came back idle"
        time.sleep(0.001)


def test_the_thread_that_finished_last_takes_the_next_task() -> None:
    pool = WarmThreadPool(4, "test-warm")
    try:
        # Four tasks held together start four threads.
        barrier = threading.Barrier(4, timeout=10)
        held = [pool.submit(lambda: (barrier.wait(), _thread())[1]) for _ in range(4)]
        threads = {f.result(timeout=10) for f in held}
        assert len(threads) == 4
        # One at a time, each next task runs where the one before it ran
        # (a FIFO executor sends them round all four). A task's result is
        # out a moment before its thread is idle again: each next task is
        # given once all four are.
        _all_idle(pool, 4)
        first = pool.submit(_thread).result(timeout=10)
        for _ in range(20):
            _all_idle(pool, 4)
            assert pool.submit(_thread).result(timeout=10) == first
    finally:
        pool.shutdown()


def test_at_most_max_workers_threads_and_the_rest_wait_their_turn() -> None:
    pool = WarmThreadPool(2, "test-warm-cap")
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def task(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        release.wait(10)
        with lock:
            running -= 1
        return n

    try:
        futures = [pool.submit(task, n) for n in range(6)]
        release.set()
        assert [f.result(timeout=10) for f in futures] == list(range(6))
        assert most == 2
    finally:
        pool.shutdown()


def test_a_failing_task_fails_its_future_and_the_thread_goes_on() -> None:
    pool = WarmThreadPool(1, "test-warm-error")

    def fail() -> None:
        raise ValueError("bad row")

    try:
        with pytest.raises(ValueError, match="bad row"):
            pool.submit(fail).result(timeout=10)
        assert pool.submit(lambda: 5).result(timeout=10) == 5
    finally:
        pool.shutdown()


def test_shutdown_stops_the_threads_and_refuses_new_tasks() -> None:
    pool = WarmThreadPool(3, "test-warm-stop")
    barrier = threading.Barrier(3, timeout=10)
    for f in [pool.submit(barrier.wait) for _ in range(3)]:
        f.result(timeout=10)
    names = {t.name for t in threading.enumerate() if t.name.startswith("test-warm-stop")}
    assert len(names) == 3
    pool.shutdown(wait=True)
    assert not [t for t in threading.enumerate() if t.name.startswith("test-warm-stop")]
    with pytest.raises(RuntimeError):
        pool.submit(lambda: 1)
