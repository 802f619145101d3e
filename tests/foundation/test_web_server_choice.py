"""The web server's processes and the HTTP parser and event loop it serves with."""

from __future__ import annotations

import uvloop
from django.utils.module_loading import import_string
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from memory.management.commands import engram_run


async def _app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    pass


def test_uvicorn_serves_with_the_c_parser_and_event_loop() -> None:
    # The worker class ./run names asks for "auto": these are what it gets
    # when installed. (A bare app: loading Engram's would only import it again.)
    worker = import_string(engram_run.WORKER_CLASS)
    config = Config(app=_app, **worker.CONFIG_KWARGS)
    config.load()
    assert config.http_protocol_class is HttpToolsProtocol
    assert config.get_loop_factory() is uvloop.new_event_loop


def test_web_workers_follow_the_cores_unless_configured(monkeypatch) -> None:
    monkeypatch.delenv("ENGRAM_WEB_WORKERS", raising=False)
    monkeypatch.setattr(engram_run.os, "cpu_count", lambda: 4)
    assert engram_run.default_web_workers() == 4
    monkeypatch.setattr(engram_run.os, "cpu_count", lambda: 1)
    assert engram_run.default_web_workers() == 2
    monkeypatch.setattr(engram_run.os, "cpu_count", lambda: 64)
    assert engram_run.default_web_workers() == 8
    monkeypatch.setattr(engram_run.os, "cpu_count", lambda: None)
    assert engram_run.default_web_workers() == 2
    monkeypatch.setenv("ENGRAM_WEB_WORKERS", "3")
    assert engram_run.default_web_workers() == 3
