"""Helpers for the tool tests: call a tool over REST as an agent would."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _mirror_dir(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror"}


@pytest.fixture
def call(api):  # type: ignore[no-untyped-def]
    """call(name, **arguments) -> (status, json) through POST /api/v1/tools/{name}."""

    def run(name: str, **arguments: Any) -> tuple[int, Any]:
        response = api.post(f"/api/v1/tools/{name}", arguments, content_type="application/json")
        return response.status_code, response.json()

    return run


@pytest.fixture
def ok(call):  # type: ignore[no-untyped-def]
    """ok(name, **arguments) -> json, asserting a 200."""

    def run(name: str, **arguments: Any) -> Any:
        status, body = call(name, **arguments)
        assert status == 200, (name, status, body)
        return body

    return run
