"""Size caps on the paths that screen long texts hold before screening
(~30 µs a character on letter-heavy text): over the cap is a quick 4xx
naming the limit, never minutes of screening."""

from __future__ import annotations

import time

import pytest

from memory.models import Turn
from memory.services.export import FORMAT

pytestmark = pytest.mark.django_db

LETTERS = "abcdefghij" * 20_000  # 200,000 letters: ~6 s of screening


@pytest.fixture(autouse=True)
def _warm(api):  # type: ignore[no-untyped-def]
    # The first request of a process loads the URLconf and compiles the rules.
    api.post("/api/v1/memory/facts", {"text": "warm up"}, content_type="application/json")


def quick(call):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    response = call()
    assert time.perf_counter() - start < 2.0
    assert 400 <= response.status_code < 500, response.content
    return response


@pytest.mark.parametrize(
    ("method", "path", "body", "limit"),
    [
        ("put", "/api/v1/core/user", {"text": LETTERS}, "32000"),
        ("post", "/api/v1/memory/facts", {"text": LETTERS}, "4000"),
        ("post", "/api/v1/memory/remember_fact", {"text": LETTERS}, "2000"),
        ("post", "/api/v1/skills", {"name": "big", "body": LETTERS}, "64000"),
        ("post", "/api/v1/turns", {"session_id": "s", "role": "user", "text": LETTERS}, "64000"),
    ],
)
def test_a_text_over_its_cap_answers_4xx_quickly(api, method, path, body, limit) -> None:  # type: ignore[no-untyped-def]
    response = quick(lambda: getattr(api, method)(path, body, content_type="application/json"))
    assert limit in response.content.decode()


def test_an_import_row_over_the_cap_is_refused_before_screening(api, space) -> None:  # type: ignore[no-untyped-def]
    ts = "2024-01-01T00:00:00+00:00"
    export = {
        "format": FORMAT,
        "version": 1,
        "sessions": [
            {
                "external_id": "s",
                "started_at": ts,
                "last_turn_at": ts,
                "turns": [{"role": "user", "text": LETTERS[:70_000], "ts": ts, "created_at": ts}],
            }
        ],
    }
    response = quick(lambda: api.post("/api/v1/import", export, content_type="application/json"))
    assert "sessions[0].turns[0].text: at most 64000 characters" in response.content.decode()
    assert Turn.objects.filter(space=space).count() == 0
