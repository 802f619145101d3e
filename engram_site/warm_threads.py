"""A thread pool whose next task goes to the thread that finished last.

The web views run on a worker's pool of ENGRAM_WEB_THREADS threads (asgi.py),
each with its own database connection. A ThreadPoolExecutor hands a task to
whichever idle thread its queue wakes, and Python wakes the one that has
waited longest: so requests went round all eight threads in turn, and each
of them ran on a connection whose page cache and prepared statements, and on
memory the core's caches held, had gone cold while the other seven ran. Here
the idle threads wait on a stack and the one that finished last takes the
next task; the others are there for the moments when more requests wait on
something other than the CPU (asgi.py, running.py). `bench_http --endpoint
recall` at 100k + 100k: with 2 threads instead of 8 the server's CPU a
request was 0.95x (cheaper in 10 of 10 rounds); this pool against the
executor it replaces, 1.11x the requests (ahead in 7 of 12 rounds).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from queue import SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")

# A task: its future, the function and its arguments. None stops a thread.
_Task = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class WarmThreadPool(Executor):
    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._lock = threading.Lock()
        self._idle: list[SimpleQueue[_Task | None]] = []  # the last one finished last
        self._waiting: collections.deque[_Task] = collections.deque()  # no thread was free
        self._threads: list[threading.Thread] = []
        self._shut = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        task: _Task = (future, fn, args, kwargs)
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if self._idle:
                self._idle.pop().put(task)
            elif len(self._threads) < self._max:
                thread = threading.Thread(
                    target=self._work,
                    args=(task,),
                    name=f"{self._prefix}_{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
            else:
                self._waiting.append(task)
        return future

    def _work(self, task: _Task | None) -> None:
        inbox: SimpleQueue[_Task | None] = SimpleQueue()
        while task is not None:
            future, fn, args, kwargs = task
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # the caller gets it from the future
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            # Nothing of the task is kept while the thread waits for the next.
            del future, fn, args, kwargs
            with self._lock:
                if self._waiting:
                    task = self._waiting.popleft()
                    continue
                if self._shut:
                    return
                self._idle.append(inbox)
            task = inbox.get()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shut = True
            if cancel_futures:
                while self._waiting:
                    self._waiting.popleft()[0].cancel()
            idle, self._idle = self._idle, []
            threads = list(self._threads)
        for inbox in idle:
            inbox.put(None)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
