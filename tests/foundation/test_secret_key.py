"""The secret key made on first start: processes that start together on a
fresh data directory (web, worker and beat) all read the same, whole key."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Each process loads Django first, then waits for the go signal, so all of
# them reach the settings module within a millisecond or so of each other.
READ_KEY = """
import os, sys, time
import django.conf
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.0005)
print(django.conf.settings.SECRET_KEY)
"""


def test_processes_starting_together_share_one_key(tmp_path):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_SECRET_KEY"}
    env.update(
        DJANGO_SETTINGS_MODULE="engram_site.settings",
        PYTHONPATH=str(ROOT),
    )
    data, go = tmp_path / "data", tmp_path / "go"
    env["ENGRAM_DATA_DIR"] = str(data)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", READ_KEY, str(go)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(12)
    ]
    time.sleep(3)  # let every process get to its wait
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    keys = {out.strip() for out, _ in outputs}
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    assert len(keys) == 1
    key = keys.pop()
    assert len(key) >= 50
    assert (data / "secret_key").read_text().strip() == key
    assert (data / "secret_key").stat().st_mode & 0o077 == 0
    # No temporary file is left behind.
    assert not [p.name for p in data.iterdir() if p.name.startswith(".secret_key")]
