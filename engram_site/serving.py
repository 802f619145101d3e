"""Spreading keep-alive connections over the web server's worker processes.

Every worker listens on the one socket gunicorn opened, and the kernel hands
a new connection to the worker it wakes first, the same one each time while
they are idle. So the connections a client opens together (an agent's pool,
a load test) all land on one worker: 15 of 16 did, and a process runs its
Python on one core at a time, so two workers served 87 recalls a second
where the same two, each given half the connections, served 230.

KeepAliveLimit ends a connection after ENGRAM_KEEPALIVE_REQUESTS answers, as
nginx's keepalive_requests does: the last answer says `Connection: close`
and the client opens a new connection for its next request (HTTP/1.1
clients do that on their own). A worker whose threads are busy is slower to
take the new one, so connections drift to where there is room. Reconnecting
on loopback costs a fraction of a millisecond every few dozen requests.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Connections remembered per process; past this the counts start over (an
# early close is harmless, a count that never ends is not).
_REMEMBERED = 4096


class KeepAliveLimit:
    def __init__(self, app: ASGIApp, *, requests: int) -> None:
        self.app = app
        self.requests = requests
        self._served: dict[Any, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.requests <= 0 or scope.get("client") is None:
            await self.app(scope, receive, send)
            return
        # A connection is its two ends; uvicorn gives both in the scope.
        key = (tuple(scope["client"]), tuple(scope.get("server") or ()))
        served = self._served.get(key, 0) + 1
        if served < self.requests:
            if len(self._served) >= _REMEMBERED:
                self._served.clear()
            self._served[key] = served
            await self.app(scope, receive, send)
            return
        self._served.pop(key, None)

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, closing)
