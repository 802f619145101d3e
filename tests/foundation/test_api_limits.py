"""Caps on what one request may ask: JSON nesting depth, batch size, k and
the body size, each answered with a 4xx JSON error that names the limit."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db


def nested(depth: int) -> dict:
    """A turn whose whole body nests `depth` levels (the body itself is one)."""
    metadata: object = 1
    for _ in range(depth - 1):
        metadata = {"a": metadata}
    return {
        "session_id": "s1",
        "role": "user",
        "text": "Anna moved to Lisbon.",
        "metadata": metadata,
    }


def post(api, path: str, body: str):  # type: ignore[no-untyped-def]
    return api.post(path, body, content_type="application/json")


def test_bodies_up_to_the_depth_limit_are_taken(api, settings):
    assert settings.MAX_JSON_DEPTH == 32
    assert post(api, "/api/v1/turns", json.dumps(nested(32))).status_code == 202


@pytest.mark.parametrize("depth", [33, 900, 100_000])
def test_deeper_bodies_get_400_naming_the_limit(api, depth):
    body = json.dumps(nested(33)) if depth == 33 else "[" * depth + "]" * depth
    for path in ("/api/v1/turns", "/api/v1/recall", "/api/v1/turns/batch"):
        response = post(api, path, body)
        assert response.status_code == 400, (path, response.content[:200])
        assert "32 levels deep" in response.json()["detail"]
        assert "ENGRAM_MAX_JSON_DEPTH" in response.json()["detail"]


def test_the_depth_limit_is_a_setting(api, settings):
    settings.MAX_JSON_DEPTH = 8
    assert post(api, "/api/v1/turns", json.dumps(nested(8))).status_code == 202
    response = post(api, "/api/v1/turns", json.dumps(nested(9)))
    assert response.status_code == 400 and "8 levels" in response.json()["detail"]


def test_a_batch_over_500_turns_and_k_over_100_are_refused(api):
    turn = {"session_id": "s1", "role": "user", "text": "Anna moved to Lisbon."}
    response = post(api, "/api/v1/turns/batch", json.dumps({"turns": [turn] * 501}))
    assert response.status_code == 422 and "turns" in response.json()["detail"]
    response = post(api, "/api/v1/recall", json.dumps({"query": "Lisbon", "k": 101}))
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "k"


def test_a_body_over_the_size_limit_gets_413(api, settings):
    settings.MAX_BODY_BYTES = 4096
    response = post(api, "/api/v1/turns", json.dumps(nested(2) | {"text": "x" * 5000}))
    assert response.status_code == 413 and "4096" in response.json()["detail"]
