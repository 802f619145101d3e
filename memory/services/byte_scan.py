"""Count byte strings in files, in a child process.

SQLite guards its database, WAL and shared-memory files with POSIX advisory
locks, which belong to the process, not to a file descriptor: closing *any*
descriptor a process holds on such a file drops every lock the process's
SQLite connections hold on it. Reading the database or WAL as bytes from the
server process would therefore release its connections' locks behind their
back, and another process could then write over a page they believe locked
(seen as "disk I/O error" and a damaged WAL index). So the verified forget's
byte scans run here, in a process of their own, whose descriptors and locks
are nobody else's.

Run as `python -m memory.services.byte_scan`: a JSON request on stdin,
{"paths": [...], "needles": [base64, ...], "mode": "count" | "any"}, and a
JSON list on stdout, one number per path (occurrences, or 0/1 for "any").
"""

from __future__ import annotations

import base64
import json
import mmap
import subprocess
import sys
from pathlib import Path

TIMEOUT_SECONDS = 120


def scan(paths: list[Path], needles: list[bytes], *, mode: str = "count") -> list[int]:
    """One figure per path, counted by a child process."""
    if not paths or not needles:
        return [0] * len(paths)
    request = {
        "paths": [str(p) for p in paths],
        "needles": [base64.b64encode(n).decode() for n in needles],
        "mode": mode,
    }
    done = subprocess.run(
        [sys.executable, "-m", "memory.services.byte_scan"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return [int(n) for n in json.loads(done.stdout)]


def _count(path: Path, needles: list[bytes], mode: str) -> int:
    try:
        if path.stat().st_size == 0:
            return 0
        with (
            path.open("rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            if mode == "any":
                return int(any(data.find(n) != -1 for n in needles))
            count = 0
            for needle in needles:
                at = data.find(needle)
                while at != -1:
                    count += 1
                    at = data.find(needle, at + 1)
            return count
    except (OSError, ValueError):
        return 0


def main() -> None:
    request = json.load(sys.stdin)
    needles = [base64.b64decode(n) for n in request["needles"]]
    mode = request.get("mode", "count")
    json.dump([_count(Path(p), needles, mode) for p in request["paths"]], sys.stdout)


if __name__ == "__main__":
    main()
