"""Guards `engram_run` takes before it starts anything: the address it will
serve on is free, and no other Engram runs on the same data directory.

Two workers and two beats on one data directory would share one SQLite file
and one filesystem broker: beat's schedule would fire twice and the workers
would fight over the same queue files. A lock on a file in the data
directory, held for as long as any of the processes lives, makes the second
`./run` refuse to start instead."""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "engram-run.lock"


class AlreadyRunning(Exception):
    """Another engram_run holds the lock on this data directory."""

    def __init__(self, path: Path, holder: str) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{path} is locked by {holder or 'another process'}")


class PortInUse(Exception):
    """Something already listens on the address engram_run would bind."""

    def __init__(self, bind: str, reason: str) -> None:
        self.bind = bind
        self.reason = reason
        super().__init__(f"{bind}: {reason}")


@dataclass
class RunLock:
    """An exclusive flock on `<data dir>/engram-run.lock`. The open file is
    handed to the child processes (`fd` in Popen's pass_fds): a flock belongs
    to the open file, so the lock holds until the last of them exits, even if
    engram_run itself is killed and leaves its children running."""

    path: Path
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def acquire(data_dir: Path) -> RunLock:
    path = Path(data_dir) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = ""
        try:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        except OSError:
            pass
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise AlreadyRunning(path, holder) from None
        raise
    # Who holds it, for the message the next engram_run prints.
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
    return RunLock(path=path, fd=fd)


def split_bind(bind: str) -> tuple[str, int] | None:
    """gunicorn's --bind as (host, port); None for a unix socket or fd."""
    if bind.startswith(("unix:", "fd://")):
        return None
    host, sep, port = bind.rpartition(":")
    if not sep:
        host, port = bind, "8000"  # gunicorn's default port
    host = host.strip("[]") or "0.0.0.0"  # gunicorn reads ":8000" as every address
    try:
        number = int(port)
    except ValueError:
        raise PortInUse(bind, f"{port!r} is not a port number") from None
    if not 0 < number < 65536:
        raise PortInUse(bind, f"{number} is not a port number")
    return host, number


def check_port_free(bind: str) -> None:
    """Bind the address the way gunicorn will (SO_REUSEADDR, so a socket
    left in TIME_WAIT by the previous run does not count) and let it go.
    Raises PortInUse if anything listens there already."""
    address = split_bind(bind)
    if address is None:
        return
    host, port = address
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise PortInUse(bind, f"cannot resolve {host!r}: {exc}") from None
    for family, kind, proto, _, sockaddr in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise PortInUse(bind, "the port is already in use") from None
                raise PortInUse(bind, exc.strerror or str(exc)) from None
