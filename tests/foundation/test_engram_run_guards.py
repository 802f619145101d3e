"""./run (engram_run) refuses to start anything when its port is taken or
another Engram runs on the same data directory, and says so; the data
directory's lock lasts as long as any process it started."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from engram_site import runguard

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


def engram_run(data_dir: Path, bind: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ENGRAM_DATA_DIR": str(data_dir),
        "ENGRAM_DATABASE_URL": f"sqlite:///{data_dir / 'engram.sqlite3'}",
        "ENGRAM_REDIS_URL": "",
    }
    return subprocess.run(
        [sys.executable, MANAGE, "engram_run", "--bind", bind],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_busy_port_stops_it_before_anything_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = engram_run(tmp_path, f"127.0.0.1:{port}")
    assert result.returncode == 1
    assert f"Cannot serve on 127.0.0.1:{port}: the port is already in use" in result.stderr
    assert "Nothing was started" in result.stderr
    # Not even migrated: no worker or beat could have been started.
    assert not (tmp_path / "engram.sqlite3").exists()
    assert "celery" not in result.stdout.lower()
    runguard.acquire(tmp_path).release()  # and the lock was let go


def test_a_second_engram_on_the_same_data_directory_is_refused(tmp_path):
    lock = runguard.acquire(tmp_path)
    try:
        result = engram_run(tmp_path, "127.0.0.1:0")
    finally:
        lock.release()
    assert result.returncode == 1
    assert f"Engram is already running on the data directory {tmp_path}" in result.stderr
    assert f"pid {os.getpid()}" in result.stderr
    assert not (tmp_path / "engram.sqlite3").exists()


def test_the_lock_outlives_engram_run_while_a_child_holds_it(tmp_path):
    lock = runguard.acquire(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        pass_fds=(lock.fd,),
    )
    try:
        lock.release()  # engram_run gone, its child still running
        with pytest.raises(runguard.AlreadyRunning):
            runguard.acquire(tmp_path)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=10)
    runguard.acquire(tmp_path).release()


@pytest.mark.parametrize(
    ("bind", "expected"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:9000", ("::1", 9000)),
        (":8001", ("0.0.0.0", 8001)),
        ("localhost", ("localhost", 8000)),
        ("unix:/tmp/engram.sock", None),
    ],
)
def test_bind_addresses_are_read_as_gunicorn_reads_them(bind, expected):
    assert runguard.split_bind(bind) == expected


def test_a_bind_that_is_not_a_port_is_refused():
    with pytest.raises(runguard.PortInUse, match="not a port number"):
        runguard.check_port_free("127.0.0.1:http")
