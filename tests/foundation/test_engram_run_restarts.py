"""engram_run restarts a child that dies (a Celery worker exits when its
broker connection drops mid-ack) and gives up on one that keeps dying."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from memory.management.commands.engram_run import RESTARTS, Command


def _spawner(script: str, spawned: list[str]):  # type: ignore[no-untyped-def]
    def spawn(name: str) -> subprocess.Popen[bytes]:
        spawned.append(name)
        return subprocess.Popen([sys.executable, "-c", script])

    return spawn


def test_a_child_that_keeps_dying_stops_the_run():
    spawned: list[str] = []
    spawn = _spawner("raise SystemExit(3)", spawned)
    with pytest.raises(SystemExit) as stopped:
        Command()._supervise({"worker": spawn("worker")}, spawn)
    assert stopped.value.code == 3
    assert len(spawned) == RESTARTS + 1  # the first start and RESTARTS restarts


def test_a_crashed_child_is_restarted(monkeypatch):
    spawned: list[str] = []
    # the first start crashes at once, the restart keeps running
    first = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])
    spawn = _spawner("import time; time.sleep(60)", spawned)
    procs = {"worker": first}
    import signal

    handlers: dict[int, object] = {}
    monkeypatch.setattr(signal, "signal", lambda sig, fn: handlers.__setitem__(sig, fn))
    runner = threading.Thread(target=Command()._supervise, args=(procs, spawn), daemon=True)
    runner.start()
    deadline = time.monotonic() + 20
    while procs["worker"] is first and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spawned == ["worker"]
    assert procs["worker"].poll() is None  # the restarted one runs
    handlers[signal.SIGTERM](signal.SIGTERM, None)  # type: ignore[operator]
    runner.join(timeout=30)
    assert procs["worker"].poll() is not None  # stopped with the run
