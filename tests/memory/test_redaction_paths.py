"""No raw secret is stored or served on any write path: turn text and
metadata, history and space imports, graph imports, environment reports,
skills, and the redacted export (which also cuts texts to previews)."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from environment.models import EnvironmentSnapshot
from memory.models import Entity, MemoryItem, Session, Skill, Turn
from memory.services.export import PREVIEW_CHARS, preview

pytestmark = pytest.mark.django_db

STRIPE = "sk_live_51HxYzAbCdEfGhIjKlMnOpQr0123456789"
PG_PASSWORD = "w8Kp2Lq9Xz"
CARD = "4111 1111 1111 1111"
GITLAB = "glpat-Zx8vB2nQ4rT6yU1iO3pA"
EMAIL = "maria.lopez@example.es"
RAW = (STRIPE, PG_PASSWORD, CARD, GITLAB, EMAIL, "hunter2hunter2")


def _dump_all() -> str:
    """Every row the writes below can touch, as one string."""
    rows = [
        *Turn.objects.values("text", "metadata"),
        *Session.objects.values("title", "metadata"),
        *MemoryItem.objects.values("text", "subject", "object", "metadata"),
        *Entity.objects.values("name", "norm", "summary"),
        *Skill.objects.values("description", "body"),
        *EnvironmentSnapshot.objects.values("hostname", "data"),
    ]
    return json.dumps(rows, default=str, ensure_ascii=False)


def _assert_clean(text: str) -> None:
    leaks = [raw for raw in RAW if raw in text]
    assert not leaks, leaks


def test_turn_text_and_metadata(api) -> None:  # type: ignore[no-untyped-def]
    body = {
        "session_id": "s1",
        "role": "user",
        "text": f"my key is {STRIPE} and mail me at {EMAIL} 👨‍👩‍👧",
        "ref": "t1",
        "metadata": {
            "tool": {"env": {"DATABASE_URL": f"postgres://app:{PG_PASSWORD}@db/prod"}},
            "password": "hunter2hunter2",
            "cards": [f"card {CARD}"],
            "model": "gpt-4o",
        },
    }
    r = api.post("/api/v1/turns", body, content_type="application/json")
    assert r.status_code == 202, r.content
    turn = Turn.objects.get()
    # (Whether the zero-width joiners survive is the injection screen's
    # concern; redaction keeps every character outside a secret.)
    assert "[REDACTED:stripe_key]" in turn.text and "[REDACTED:email]" in turn.text
    assert turn.metadata["password"] == "[REDACTED:password]"
    assert (
        turn.metadata["tool"]["env"]["DATABASE_URL"]
        == "postgres://app:[REDACTED:db_password]@db/prod"
    )
    assert turn.metadata["model"] == "gpt-4o"
    _assert_clean(_dump_all())


def test_space_import_redacts_and_stays_idempotent(api) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now().isoformat()
    export = {
        "format": "engram.space",
        "version": 1,
        "sessions": [
            {
                "external_id": "imp",
                "title": f"chat with {EMAIL}",
                "started_at": now,
                "last_turn_at": now,
                "metadata": {"api_key": "abc123def456ghi"},
                "turns": [
                    {
                        "role": "user",
                        "text": f"token {GITLAB}",
                        "ts": now,
                        "created_at": now,
                        "metadata": {"card": CARD},
                        "ref": "r1",
                        "skip_reason": "",
                    },
                ],
            }
        ],
        "items": [
            {
                "uid": "u1",
                "text": "The wifi password: hunter2hunter2",
                "last_seen": now,
                "created_at": now,
                "metadata": {"secret": STRIPE},
            },
        ],
        "entities": [
            {
                "name": EMAIL,
                "norm": EMAIL,
                "created_at": now,
                "last_mentioned_at": now,
                "aliases": [{"alias": EMAIL, "norm": EMAIL}],
            },
        ],
        "relations": [{"src": EMAIL, "rel": "knows", "dst": EMAIL, "created_at": now}],
        "skills": [
            {
                "name": "deploy",
                "body": f"psql postgres://app:{PG_PASSWORD}@db/prod",
                "created_at": now,
                "updated_at": now,
            },
        ],
    }
    first = api.post("/api/v1/import", export, content_type="application/json")
    assert first.status_code == 200, first.content
    assert first.json()["created"]["items"] == 1 and first.json()["created"]["relations"] == 1
    _assert_clean(_dump_all())
    again = api.post("/api/v1/import", export, content_type="application/json").json()
    assert again["created"] == {}, again


def test_graph_import(api) -> None:  # type: ignore[no-untyped-def]
    dump = {
        "nodes": [
            {"id": "a", "name": "Maria", "type": "person"},
            {"id": "b", "name": EMAIL, "type": "thing"},
        ],
        "edges": [{"source": "a", "target": "b", "relationship_name": "uses_address"}],
    }
    r = api.post("/api/v1/import/graph", dump, content_type="application/json")
    assert r.status_code == 200, r.content
    _assert_clean(_dump_all())


def test_environment_report(api) -> None:  # type: ignore[no-untyped-def]
    body = {
        "hostname": "laptop",
        "os": "Linux",
        "home": "/home/maria",
        "folders": {"notes": f"/home/maria/{EMAIL}/notes"},
        "binaries": {"deploy": f"/usr/bin/env GITLAB_TOKEN={GITLAB} deploy"},
        "path_dirs": ["/usr/bin"],
    }
    r = api.post("/api/v1/environment/report", body, content_type="application/json")
    assert r.status_code == 200, r.content
    _assert_clean(_dump_all())
    _assert_clean(api.get("/api/v1/environment").content.decode())


def test_skills(api) -> None:  # type: ignore[no-untyped-def]
    r = api.post(
        "/api/v1/skills",
        {"name": "ship", "description": "how to ship", "body": f"export STRIPE_KEY={STRIPE}"},
        content_type="application/json",
    )
    assert r.status_code in (200, 201), r.content
    _assert_clean(_dump_all())


def test_the_redacted_export_masks_legacy_rows_and_shows_previews(api, space) -> None:  # type: ignore[no-untyped-def]
    # Rows stored raw, as before redaction covered them (or with ENGRAM_REDACT
    # leaving a kind out): the redacted view must still mask every kind.
    MemoryItem.objects.create(
        space=space, text=f"Stripe {STRIPE} and {EMAIL}", metadata={"password": "hunter2hunter2"}
    )
    MemoryItem.objects.create(
        space=space, text="A" * 30 + " 👨‍👩‍👧 tail of a long memory that goes on"
    )
    plain = api.get("/api/v1/export").content.decode()
    assert STRIPE in plain
    for fmt in ("json", "markdown"):
        red = api.get("/api/v1/export", {"redacted": "true", "format": fmt}).content.decode()
        _assert_clean(red)
    items = api.get("/api/v1/export", {"redacted": "true"}).json()["items"]
    assert all(len(i["text"]) <= PREVIEW_CHARS + 12 for i in items)
    assert any(i["text"].endswith("👨‍👩‍👧 tail…") or "👨‍👩‍👧" in i["text"] for i in items)


def test_preview_never_cuts_a_marker_or_an_emoji() -> None:
    text = "x" * 35 + "[REDACTED:email] and more text after it"
    assert preview(text) == "x" * 35 + "[REDACTED:email]…"
    family = "y" * 38 + "👨‍👩‍👧" + " more"
    assert preview(family) == "y" * 38 + "👨‍👩‍👧…"
    assert preview("short") == "short"
