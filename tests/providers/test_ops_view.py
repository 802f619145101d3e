"""The Ops view lists the configured providers with their breaker state,
last error and last latency, and its "test connection" button (an htmx
POST) lists a provider's tools."""

from __future__ import annotations

import sys

import pytest
from django.contrib.auth.models import User

from memory.services.providers import breaker
from tests.providers.conftest import stdio_entry


@pytest.fixture
def staff(client, space):  # type: ignore[no-untyped-def]
    client.force_login(User.objects.create_superuser("curator", "c@example.com", "pw"))
    return client


def test_ops_lists_providers_with_their_status(staff, providers) -> None:  # type: ignore[no-untyped-def]
    providers(
        stdio_entry(mode="hybrid", spaces=["test-space"]),
        {
            "name": "remote",
            "url": "https://memory.example/mcp",
            "headers": {"Authorization": "Bearer s3cret"},
        },
    )
    breaker.success("notes", 12.5)
    breaker.failure("remote", "ConnectError: refused")
    page = staff.get("/ops/").content.decode()
    assert "External memory providers" in page
    assert "notes" in page and "hybrid" in page and "memserver.py" in page
    assert "last latency 12.5 ms" in page
    assert "ConnectError: refused" in page
    assert "headers: Authorization" in page
    assert "s3cret" not in page  # header values are never shown
    assert 'hx-post="/ops/external/notes/test/"' in page


def test_the_connection_test_lists_the_tools(staff, providers) -> None:  # type: ignore[no-untyped-def]
    providers(stdio_entry(mode="tools"))
    answer = staff.post("/ops/external/notes/test/", HTTP_HX_REQUEST="true").content.decode()
    assert "Connected: 5 tools" in answer
    for tool in ("search", "remember", "fail", "add", "ping"):
        assert f"<code>{tool}</code>" in answer
    page = staff.get("/ops/").content.decode()
    assert "circuit closed" in page and "· 1 call\n" in page


def test_a_failed_connection_test_says_why(staff, providers) -> None:  # type: ignore[no-untyped-def]
    providers({"name": "gone", "command": [sys.executable, "-c", "raise SystemExit(2)"]})
    answer = staff.post("/ops/external/gone/test/", HTTP_HX_REQUEST="true").content.decode()
    assert "Failed: cannot connect" in answer
    unknown = staff.post("/ops/external/nope/test/", HTTP_HX_REQUEST="true").content.decode()
    assert "no such provider is configured" in unknown
    plain = staff.post("/ops/external/gone/test/")
    assert plain.status_code == 302 and plain["Location"].endswith("#providers")
