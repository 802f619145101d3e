"""MCP to the providers, with the official Python SDK's client.

Each process keeps one live connection per provider (a stdio subprocess or
a Streamable HTTP session), held by a task on one background event loop
thread: recall runs on threads and cannot afford a process start or an
MCP handshake per query. A connection that breaks is opened again by the
next call. Callers on any thread `start()` an operation, which answers a
`Pending` whose `result(timeout)` waits no longer than the caller allows;
every outcome (and every late answer) is counted by the circuit breaker,
and while a provider's circuit is open no call goes out at all.

No answer is cached here: every call reaches the provider (what it answers
for one space must never be served to another)."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import mcp_types as types
from anyio.from_thread import BlockingPortal
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memory.services.providers import breaker
from memory.services.providers.config import Provider

log = logging.getLogger(__name__)

T = TypeVar("T")

# A tool listing is configuration, not memory: kept per connection for this
# long so prefetch does not list tools before every search.
TOOLS_TTL_SECONDS = 60.0


class ProviderError(Exception):
    """A provider could not answer: down, late, its circuit open, or its
    tool reported an error. `detail` says which, for logs and API answers."""

    def __init__(self, provider: str, detail: str, *, unavailable: bool = True) -> None:
        super().__init__(f"provider {provider}: {detail}")
        self.provider = provider
        self.detail = detail
        # True: not reachable (503); False: it answered with an error (502).
        self.unavailable = unavailable


# --- the event loop thread ------------------------------------------------------------------

_lock = threading.Lock()
_portal: BlockingPortal | None = None
_portal_pid = 0


def _run_loop(ready: Future[BlockingPortal]) -> None:
    async def main() -> None:
        async with BlockingPortal() as portal:
            ready.set_result(portal)
            await portal.sleep_until_stopped()

    asyncio.run(main())


def _loop() -> BlockingPortal:
    """The process's provider loop, started on first use (and again in a
    forked child, which does not inherit the parent's thread)."""
    global _portal, _portal_pid
    with _lock:
        if _portal is None or _portal_pid != os.getpid():
            _sessions.clear()
            ready: Future[BlockingPortal] = Future()
            # A daemon thread: it must never hold up the process's exit.
            threading.Thread(
                target=_run_loop, args=(ready,), name="engram-providers", daemon=True
            ).start()
            _portal, _portal_pid = ready.result(timeout=10), os.getpid()
        return _portal


# --- connections (touched only on the loop) ---------------------------------------------------


@asynccontextmanager
async def _open(provider: Provider) -> AsyncIterator[Client]:
    info = types.Implementation(name="engram", version="1")
    if provider.command:
        params = StdioServerParameters(
            command=provider.command[0],
            args=list(provider.command[1:]),
            env=dict(provider.env) or None,
        )
        async with Client(params, client_info=info, cache=None) as client:
            yield client
        return
    async with create_mcp_http_client(headers=dict(provider.headers)) as http:
        transport = streamable_http_client(provider.url, http_client=http)
        async with Client(transport, client_info=info, cache=None) as client:
            yield client


class Connection:
    """One provider's live client, held open by `hold()` until `stop`."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.client: Client | None = None
        self.error: BaseException | None = None
        self.ready = asyncio.Event()
        self.stop = asyncio.Event()
        self.done = False
        self.tools: list[types.Tool] | None = None
        self.tools_at = 0.0
        self.task: asyncio.Task[None] | None = None

    async def hold(self) -> None:
        try:
            async with _open(self.provider) as client:
                self.client = client
                self.ready.set()
                await self.stop.wait()
        except Exception as exc:  # a failed start or a connection that broke
            self.error = exc
            log.warning("provider %s: connection closed: %r", self.provider.name, exc)
        finally:
            self.client = None
            self.done = True
            self.ready.set()


_sessions: dict[str, Connection] = {}


async def _connected(provider: Provider) -> Connection:
    conn = _sessions.get(provider.name)
    if conn is None or conn.done or conn.provider != provider:
        if conn is not None:
            conn.stop.set()
        conn = Connection(provider)
        _sessions[provider.name] = conn
        # Its own task: a caller that gives up while it connects does not
        # cancel the connection, which the next call then finds open.
        conn.task = asyncio.get_running_loop().create_task(conn.hold())
    await conn.ready.wait()
    if conn.client is None:
        raise ProviderError(provider.name, f"cannot connect: {_describe(conn.error)}")
    return conn


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "connection closed"
    # The SDK reports a failed stdio start or HTTP session as an exception
    # group; its first leaf says what happened.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:300]


async def _guarded(provider: Provider, op: Callable[[Connection], Awaitable[T]]) -> T:
    conn = await _connected(provider)
    try:
        return await op(conn)
    except ProviderError:
        raise
    except Exception as exc:
        from mcp.shared.exceptions import MCPError

        if not isinstance(exc, MCPError):
            # Not an answer from the server: the connection is suspect.
            conn.stop.set()
        raise ProviderError(provider.name, _describe(exc)) from exc


async def list_tools_on(conn: Connection, *, fresh: bool = False) -> list[types.Tool]:
    """The provider's tools: kept for TOOLS_TTL_SECONDS unless `fresh`."""
    if fresh or conn.tools is None or time.monotonic() - conn.tools_at > TOOLS_TTL_SECONDS:
        assert conn.client is not None
        listed: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await conn.client.list_tools(cursor=cursor)
            listed += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        conn.tools, conn.tools_at = listed, time.monotonic()
    return conn.tools


async def call_on(conn: Connection, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    assert conn.client is not None
    return await conn.client.call_tool(tool, arguments)


# --- calls from any thread --------------------------------------------------------------------


class Pending:
    """An operation under way on the loop (or refused before it started)."""

    def __init__(self, provider: Provider, future: Future[Any] | None, refused: str = "") -> None:
        self.provider = provider
        self.future = future
        self.refused = refused
        self.started = time.monotonic()

    def result(self, timeout: float) -> Any:
        """The answer, waiting at most `timeout` seconds (and never past the
        provider's own timeout); ProviderError otherwise."""
        name = self.provider.name
        if self.future is None:
            raise ProviderError(name, self.refused)
        try:
            value = self.future.result(timeout=max(0.0, timeout))
        except FutureTimeout:  # (TimeoutError too: the loop's own fail_after)
            self.future.cancel()
            elapsed = time.monotonic() - self.started
            detail = f"no answer within {elapsed:.2f} s"
            breaker.failure(name, detail, elapsed * 1000)
            raise ProviderError(name, detail) from None
        except ProviderError as exc:
            breaker.failure(name, exc.detail, (time.monotonic() - self.started) * 1000)
            raise
        except Exception as exc:  # anything else the SDK raised
            detail = _describe(exc)
            breaker.failure(name, detail, (time.monotonic() - self.started) * 1000)
            raise ProviderError(name, detail) from exc
        breaker.success(name, (time.monotonic() - self.started) * 1000)
        return value


def start(
    provider: Provider,
    op: Callable[[Connection], Awaitable[Any]],
    *,
    timeout: float | None = None,
) -> Pending:
    """Send `op` to the provider's connection, unless its circuit is open.
    It is cancelled after `timeout` seconds (default: the provider's)."""
    if not breaker.allow(provider.name):
        return Pending(provider, None, refused="circuit open after repeated failures")
    limit = provider.timeout if timeout is None else timeout

    async def run() -> Any:
        with anyio.fail_after(limit):
            return await _guarded(provider, op)

    try:
        future = _loop().start_task_soon(run)
    except Exception as exc:  # the loop could not start: never fail the caller
        return Pending(provider, None, refused=_describe(exc))
    return Pending(provider, future)


def call(provider: Provider, op: Callable[[Connection], Awaitable[T]]) -> T:
    """start() and wait for the answer, up to the provider's timeout."""
    return start(provider, op).result(provider.timeout + 0.1)  # type: ignore[no-any-return]


def list_tools(provider: Provider) -> list[types.Tool]:
    """Asked of the provider itself (a listing is also a health check)."""
    return call(provider, lambda conn: list_tools_on(conn, fresh=True))


def call_tool(provider: Provider, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    return call(provider, lambda conn: call_on(conn, tool, arguments))


def close_all() -> None:
    """Close every connection of this process (stdio servers exit)."""
    with _lock:
        portal = _portal if _portal_pid == os.getpid() else None
    if portal is None:
        return

    async def stop() -> None:
        for conn in list(_sessions.values()):
            conn.stop.set()
        for conn in list(_sessions.values()):
            if conn.task is not None:
                with anyio.move_on_after(5):
                    await conn.task
        _sessions.clear()

    portal.call(stop)
