"""The WSGI bridge (engram_site/wsgi_bridge.py): an ordinary answer goes to
the server in two messages, a streamed one chunk by chunk, the request body
reaches the application whole, and a client gone before sending its body
costs the application nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from engram_site.wsgi_bridge import WsgiBridge

SCOPE = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "POST",
    "scheme": "http",
    "path": "/echo",
    "raw_path": b"/echo",
    "query_string": b"",
    "root_path": "",
    "headers": [(b"content-type", b"text/plain")],
    "client": ("127.0.0.1", 5000),
    "server": ("127.0.0.1", 8000),
}


class Streamed:
    streaming = True

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.closed = chunks, False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.chunks)

    def close(self) -> None:
        self.closed = True


def _serve(app: Any, body: list[bytes], *, disconnect: bool = False) -> list[dict[str, Any]]:
    incoming = [
        {"type": "http.request", "body": part, "more_body": i < len(body) - 1}
        for i, part in enumerate(body)
    ]
    if disconnect:
        incoming = [*incoming[:1], {"type": "http.disconnect"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(WsgiBridge(app, workers=2)(SCOPE, receive, send))
    return sent


def test_an_answer_goes_in_two_messages_with_the_body_read_whole() -> None:
    def echo(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        received = environ["wsgi.input"].read()
        write = start_response("201 Created", [("Content-Type", "text/plain")])
        write(b"got ")  # the old write() callable comes first
        return [received, b"!"]

    sent = _serve(echo, [b"hello ", b"world"])
    assert sent == [
        {
            "type": "http.response.start",
            "status": 201,
            "headers": [(b"content-type", b"text/plain")],
        },
        {"type": "http.response.body", "body": b"got hello world!"},
    ]


def test_a_streamed_answer_goes_chunk_by_chunk_and_is_closed() -> None:
    streamed = Streamed([b"one", b"", b"two"])

    def app(environ: dict[str, Any], start_response: Any) -> Streamed:
        start_response("200 OK", [("Content-Length", "6")])
        return streamed

    sent = _serve(app, [b""])
    assert [m.get("body") for m in sent] == [None, b"one", b"two", b""]
    assert sent[0]["status"] == 200 and sent[-1].get("more_body") is None
    assert streamed.closed


def test_a_client_gone_before_its_body_never_reaches_the_application() -> None:
    called = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        called.append(environ)
        start_response("200 OK", [])
        return [b""]

    assert _serve(app, [b"part", b"rest"], disconnect=True) == []
    assert called == []
