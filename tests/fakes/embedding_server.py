"""A real local HTTP server speaking the Ollama ``/api/embed`` and the OpenAI
``/v1/embeddings`` wire formats, so the embedding backends' httpx calls,
timeouts, retries and error handling run for real.

Vectors are deterministic: each lowercase word hashes to a fixed random
direction and a text is the sum of its words, so texts sharing words are
close. Tests script failures per request with ``server.script(...)``:
``("status", 503)``, ``("delay", 2.0)``, ``("bad_json",)``, ``("short",)``
(one embedding too few), ``("dim", 8)`` (answer in another dimension),
``("ok",)`` (answer normally: lets a script skip requests).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

_WORD = re.compile(r"\w+")


def fake_vector(text: str, dim: int) -> list[float]:
    total = np.zeros(dim, dtype=np.float64)
    for word in _WORD.findall(text.lower()):
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        total += np.random.default_rng(seed).standard_normal(dim)
    if not total.any():
        total[0] = 1.0
    return [float(x) for x in total]


class EmbeddingServer:
    def __init__(self, *, dim: int = 16, api_key: str = "") -> None:
        self.dim = dim
        self.api_key = api_key
        self.requests: list[dict] = []  # {"path", "body", "auth"}
        self._script: deque[tuple] = deque()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server._handle(self, raw)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, *actions: tuple) -> None:
        with self._lock:
            self._script.extend(actions)

    def texts_embedded(self) -> list[str]:
        out: list[str] = []
        for req in self.requests:
            body = req["body"] or {}
            inputs = body.get("input")
            if isinstance(inputs, str):
                inputs = [inputs]
            out.extend(inputs or [])
        return out

    def _next_action(self) -> tuple | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def _handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(
                {
                    "path": handler.path,
                    "body": body,
                    "auth": handler.headers.get("Authorization"),
                }
            )
        action = self._next_action()
        dim = self.dim
        short = False
        if action is not None:
            kind = action[0]
            if kind == "status":
                return self._send(handler, action[1], {"error": f"scripted {action[1]}"})
            if kind == "delay":
                time.sleep(action[1])
            elif kind == "bad_json":
                return self._send_raw(handler, 200, b"{not json")
            elif kind == "short":
                short = True
            elif kind == "dim":
                dim = action[1]
        if self.api_key and handler.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._send(handler, 401, {"error": "bad key"})
        if not isinstance(body, dict) or "input" not in body or "model" not in body:
            return self._send(handler, 400, {"error": "model and input are required"})
        inputs = body["input"]
        if isinstance(inputs, str):
            inputs = [inputs]
        if any(not isinstance(t, str) or not t for t in inputs):
            return self._send(handler, 400, {"error": "input must be non-empty strings"})
        vectors = [fake_vector(t, dim) for t in inputs]
        if short:
            vectors = vectors[:-1]
        if handler.path == "/api/embed":
            return self._send(handler, 200, {"model": body["model"], "embeddings": vectors})
        if handler.path == "/v1/embeddings":
            # Reversed on purpose: clients must order by "index".
            data = [
                {"object": "embedding", "index": i, "embedding": v}
                for i, v in reversed(list(enumerate(vectors)))
            ]
            return self._send(
                handler,
                200,
                {"object": "list", "data": data, "model": body["model"], "usage": {}},
            )
        return self._send(handler, 404, {"error": f"no route {handler.path}"})

    def _send(self, handler: BaseHTTPRequestHandler, status: int, payload: object) -> None:
        self._send_raw(handler, status, json.dumps(payload).encode())

    def _send_raw(self, handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test); nothing to answer.
            pass


# --- pytest fixtures (imported by the embedding tests) ---------------------------

import pytest  # noqa: E402


def _reset_embedding_caches() -> None:
    from memory import embeddings
    from memory.search import vectors

    embeddings._backends.clear()
    embeddings.query_cache.clear()
    vectors.clear_cache()


@pytest.fixture
def embed_server():  # type: ignore[no-untyped-def]
    server = EmbeddingServer().start()
    yield server
    server.stop()


@pytest.fixture
def use_embeddings(settings):  # type: ignore[no-untyped-def]
    """use_embeddings(kind, url=..., model=..., timeout=..., api_key=...)
    switches the configured backend for one test."""
    _reset_embedding_caches()

    def switch(kind: str, **conf: object) -> None:
        engram = dict(settings.ENGRAM)
        engram["EMBEDDINGS"] = kind
        engram["EMBEDDINGS_URL"] = conf.get("url", "")
        engram["EMBEDDINGS_MODEL"] = conf.get("model", "")
        engram["EMBEDDINGS_API_KEY"] = conf.get("api_key", "")
        engram["EMBEDDINGS_TIMEOUT_SECONDS"] = conf.get("timeout", 5.0)
        if "batch" in conf:
            engram["EMBEDDINGS_BATCH_SIZE"] = conf["batch"]
        settings.ENGRAM = engram
        _reset_embedding_caches()

    yield switch
    _reset_embedding_caches()
