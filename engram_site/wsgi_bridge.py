"""Django's WSGI application served by the ASGI server, on a fixed pool of
threads, with one hop to a thread and one back for an ordinary answer.

Django runs as WSGI on pool threads (asgi.py says why). The adapter this
replaces (a2wsgi) went back to the event loop for every step of an answer:
to read the body, to start the answer, for each chunk of it and for its end,
each time waiting on the thread until the loop had done it. Under load a
thread spent longer waiting on the busy loop than Django took to answer a
recall. Here the body is read whole before Django sees it (AsgiBodyLimit has
already refused one over the limit), Django's answer is taken whole on the
thread, and the loop sends it in two messages. Only a streamed answer (a
static file from WhiteNoise) is sent chunk by chunk from its thread as it
is read. `bench_http` (100k + 100k, 8 connections, the two adapters
alternating run by run): POST /recall 149 and 151 -> 156 and 169 requests/s,
server CPU 12.0 -> 11.3 ms a request.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import io
import itertools
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from a2wsgi.wsgi import build_environ
from starlette.types import Message, Receive, Scope, Send

from engram_site import running
from engram_site.threads import answering
from engram_site.warm_threads import WarmThreadPool

Headers = list[tuple[bytes, bytes]]
ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class WsgiBridge:
    def __init__(self, app: Callable[..., Iterable[bytes]], *, workers: int) -> None:
        self.app = app
        # The thread that answered last answers next (warm_threads.py).
        self.executor = WarmThreadPool(max_workers=workers, thread_name_prefix="WSGI")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1000})
            return
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        if body is None:
            return  # the client went away before it finished sending
        environ = build_environ(scope, io.BytesIO(body))  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        run = functools.partial(contextvars.copy_context().run, self._answer, environ, loop, send)
        # Counted from here, the queue for a thread included (threads.py).
        with answering():
            answer = await loop.run_in_executor(self.executor, run)
        if answer is not None:
            status, headers, content = answer
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})

    def _answer(
        self, environ: Any, loop: asyncio.AbstractEventLoop, send: Send
    ) -> tuple[int, Headers, bytes] | None:
        """Django's answer whole, or None once a streamed one has been sent."""
        started: list[tuple[int, Headers]] = []
        written: list[bytes] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: ExcInfo | None = None
        ) -> Callable[[bytes], None]:
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [(int(status.split(" ", 1)[0]), _encode(headers))]
            return written.append

        with running.slot():
            return self._respond(environ, start_response, written, started, loop, send)

    def _respond(
        self,
        environ: Any,
        start_response: Callable[..., Callable[[bytes], None]],
        written: list[bytes],
        started: list[tuple[int, Headers]],
        loop: asyncio.AbstractEventLoop,
        send: Send,
    ) -> tuple[int, Headers, bytes] | None:
        iterable = self.app(environ, start_response)
        try:
            if not getattr(iterable, "streaming", False):
                content = b"".join([*written, *iterable])
                return started[0][0], started[0][1], content

            async def send_one(message: Message) -> None:
                await send(message)

            def post(message: Message) -> None:
                asyncio.run_coroutine_threadsafe(send_one(message), loop).result()

            running.step_aside()  # the client reads at its own pace from here
            status, headers = started[0]
            post({"type": "http.response.start", "status": status, "headers": headers})
            for chunk in itertools.chain(written, iterable):
                if chunk:
                    post({"type": "http.response.body", "body": chunk, "more_body": True})
            post({"type": "http.response.body", "body": b""})
            return None
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()


def _encode(headers: list[tuple[str, str]]) -> Headers:
    return [(n.strip().lower().encode("latin-1"), v.strip().encode("latin-1")) for n, v in headers]


async def _read_body(receive: Receive) -> bytes | None:
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)
