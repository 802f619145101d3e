"""Fixtures for the provider tests: the test memory server (memserver.py)
as a stdio command and served over Streamable HTTP by a real process, and
a way to configure ENGRAM_PROVIDERS for one test."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memory.services.providers import breaker, client, config, proxy

SERVER = Path(__file__).with_name("memserver.py")


def memserver_command() -> list[str]:
    return [sys.executable, str(SERVER)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


TOKEN = "t0ken-for-tests"


@pytest.fixture(scope="session")
def http_memserver() -> Iterator[str]:
    """The test server over Streamable HTTP: its /mcp URL. It refuses
    requests without the header X-Token: TOKEN."""
    port = free_port()
    proc = subprocess.Popen(
        [*memserver_command(), "--http", str(port), "--token", TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx2.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
                break
            except httpx2.HTTPError:
                time.sleep(0.1)
        else:
            raise RuntimeError("the test memory server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module", autouse=True)
def _close_connections() -> Iterator[None]:
    yield
    client.close_all()


@pytest.fixture
def providers(settings) -> Callable[..., tuple[config.Provider, ...]]:  # type: ignore[no-untyped-def]
    """providers({...}, ...): configure these ENGRAM_PROVIDERS entries for
    the test, with fresh breakers and tool listings."""

    def configure(*entries: dict[str, Any], **engram: Any) -> tuple[config.Provider, ...]:
        parsed = config.parse(list(entries))
        settings.ENGRAM = {**settings.ENGRAM, "PROVIDERS": parsed, **engram}
        breaker.reset()
        proxy.forget_listings()
        return parsed

    yield configure
    breaker.reset()
    proxy.forget_listings()


def stdio_entry(name: str = "notes", **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": memserver_command(), "timeout": 5, **extra}


def warm(provider: config.Provider) -> None:
    """Open the connection before the test measures anything (a stdio
    server's first start takes longer than a recall may wait)."""
    from memory.services.providers import health

    outcome = health.check(provider.name)
    assert outcome.ok, outcome.detail
    breaker.reset(provider.name)
