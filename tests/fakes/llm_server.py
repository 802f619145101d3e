"""A real local HTTP server speaking the OpenAI chat-completions wire format.

The LLM is the one boundary Engram's tests fake, and it is faked on the wire so
httpx, timeouts, status codes and malformed JSON are exercised for real.
Replies are scripted (`push`) or, when the script is empty, produced by a
small deterministic responder that answers extraction and resolution prompts
instantly (the benchmark uses that)."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = None  # the assistant message text
    status: int = 200
    raw: str | None = None  # a raw response body instead of a completion
    delay: float = 0.0  # seconds to wait before answering (timeouts)
    # Seconds between the bytes of the body: an answer that keeps every read
    # under a read timeout while the whole takes len(body) * trickle.
    trickle: float = 0.0


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


_TURN = re.compile(r"^TURN \[(?P<role>\w+)\][^\n]*:\n(?P<text>.*)\Z", re.S | re.M)
_NEW = re.compile(r"^NEW (\d+):", re.M)


def auto_reply(body: dict[str, Any]) -> str:
    """Extraction: the turn's first sentence as one fact about the user.
    Resolution: ADD every new candidate."""
    system = body["messages"][0]["content"]
    # The first user message: a repair request appends the bad answer and a
    # complaint after it, but asks the same question.
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if "extract durable facts" in system:
        m = _TURN.search(user)
        text = (m.group("text") if m else user).strip()
        first = re.split(r"(?<=[.!?])\s+", text)[0][:300]
        return json.dumps(
            {"facts": [{"text": first, "kind": "fact", "subject": "user", "importance": 0.5}]}
        )
    if "maintain a memory of facts" in system:
        return json.dumps(
            {
                "decisions": [
                    {"index": int(i), "action": "ADD", "ids": []} for i in _NEW.findall(user)
                ]
            }
        )
    return "{}"


GARBAGE = ("Sure! Here are the facts you asked for:", '{"facts": [{"text": ', "null", "[]")


class FakeLLM:
    """`responder`, if given, answers whatever the script does not: it returns
    the assistant message text, or None to fall back to `auto_reply`.

    `garbage` and `timeouts` make a flaky model for fault tests: that share of
    unscripted requests gets an answer that is not the JSON asked for, or no
    answer for `hang` seconds (set it above the provider's timeout)."""

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], str | None] | None = None,
        *,
        garbage: float = 0.0,
        timeouts: float = 0.0,
        hang: float = 5.0,
        seed: int = 17,
    ) -> None:
        self.responder = responder
        self.garbage, self.timeouts, self.hang = garbage, timeouts, hang
        self.faults = {"garbage": 0, "timeout": 0}
        self._rng = random.Random(seed)
        self.requests: list[dict[str, Any]] = []
        self.raw_bodies: list[bytes] = []
        self.script: deque[Reply] = deque()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, a
            # keep-alive client waits for a delayed ACK (~40 ms) on every call.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                with fake._lock:
                    fake.raw_bodies.append(raw)
                    fake.requests.append(body)
                    reply = fake.script.popleft() if fake.script else None
                    if reply is None:
                        reply = fake._fault()
                if reply is None:
                    content = fake.responder(body) if fake.responder is not None else None
                    reply = Reply(content=auto_reply(body) if content is None else content)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.raw is not None:
                    data = reply.raw.encode()
                elif reply.status != 200:
                    data = json.dumps({"error": {"message": "fake failure"}}).encode()
                else:
                    data = json.dumps(completion(reply.content or "")).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if reply.trickle:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _fault(self) -> Reply | None:
        # under self._lock
        roll = self._rng.random()
        if roll < self.garbage:
            self.faults["garbage"] += 1
            return Reply(content=self._rng.choice(GARBAGE))
        if roll < self.garbage + self.timeouts:
            self.faults["timeout"] += 1
            return Reply(content="{}", delay=self.hang)
        return None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def provider(self, **extra: Any) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": "fake-model", **extra}

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
