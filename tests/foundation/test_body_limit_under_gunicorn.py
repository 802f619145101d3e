"""413 for oversized bodies over real HTTP, through gunicorn as in production
(the ASGI app with uvicorn workers, as ./run serves it, and plain WSGI): a
declared Content-Length and a chunked body with no length at all."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection

from memory.management.commands.engram_run import WORKER_CLASS
from memory.services.spaces import create_api_key

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

LIMIT = 4096


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


APPS = {
    "asgi": ["engram_site.asgi:application", "--worker-class", WORKER_CLASS],
    "wsgi": ["engram_site.wsgi:application"],
}


@pytest.fixture(params=sorted(APPS))
def server(request: pytest.FixtureRequest) -> Iterator[int]:
    port = _free_port()
    env = {
        **os.environ,
        "ENGRAM_DATABASE_URL": _database_url(),
        "ENGRAM_MAX_BODY_BYTES": str(LIMIT),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            *APPS[request.param],
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--control-socket",
            str(settings.DATA_DIR / f"gunicorn-{port}.ctl"),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _post(port: int, key: str, body: bytes, *, chunked: bool) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    if chunked:
        # An iterator body makes http.client send Transfer-Encoding: chunked.
        pieces = (body[i : i + 1000] for i in range(0, len(body), 1000))
        conn.request("POST", "/api/v1/turns", body=pieces, headers=headers, encode_chunked=True)
    else:
        conn.request("POST", "/api/v1/turns", body=body, headers=headers)
    response = conn.getresponse()
    status, payload = response.status, json.loads(response.read() or b"{}")
    conn.close()
    return status, payload


def turn(text: str) -> bytes:
    return json.dumps({"session_id": "s1", "role": "user", "text": text}).encode()


def test_it_refuses_oversized_bodies_declared_or_chunked(server):
    _, key = create_api_key(space_name="limits")
    status, payload = _post(server, key, turn("x" * (LIMIT * 2)), chunked=False)
    assert status == 413 and str(LIMIT) in payload["detail"]
    status, payload = _post(server, key, turn("x" * (LIMIT * 2)), chunked=True)
    assert status == 413 and str(LIMIT) in payload["detail"]


def test_it_reads_a_chunked_body_under_the_limit(server):
    _, key = create_api_key(space_name="limits")
    status, payload = _post(server, key, turn("Anna moved to Lisbon in May. " * 50), chunked=True)
    assert status == 202, payload
    assert payload["queued"] is True
