"""Forgetting that leaves nothing: after a hard forget (and after a wipe) the
forgotten text is not in the SQLite database file nor its -wal file, read as
bytes, and the answer's verification report says where it looked.

Transactional tests: the forget must commit for the checkpoint to run, as it
does behind the real API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from memory.services.spaces import create_api_key

pytestmark = pytest.mark.django_db(transaction=True)

# A word no corpus has, in mixed case: the rows hold "Vorpalquix", the FTS
# index holds the term "vorpalquix"; both contain this.
CANARY = b"orpalquix"
KEPT = "The weather in the municipal park was pleasant on Sunday"


@pytest.fixture(autouse=True)
def _mirror_dir(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror"}


@pytest.fixture
def sqlite_only() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("reads the SQLite file; PostgreSQL is covered by the report tests")


def database_bytes() -> bytes:
    """The database file and its WAL, read by a child process: closing a
    descriptor on them here would drop this process's SQLite locks (see
    memory/services/byte_scan.py) and damage the database for later tests."""
    name = Path(connection.settings_dict["NAME"])
    script = (
        "import sys, pathlib\n"
        "for p in sys.argv[1:]:\n"
        "    f = pathlib.Path(p)\n"
        "    sys.stdout.buffer.write(f.read_bytes() if f.exists() else b'')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script, str(name), f"{name}-wal"], capture_output=True, check=True
    ).stdout


def post(api, path, body):  # type: ignore[no-untyped-def]
    response = api.post(path, body, content_type="application/json")
    assert response.status_code in (200, 201, 202), (path, response.content)
    return response.json()


def fill(api, space_name: str) -> None:  # type: ignore[no-untyped-def]
    for i, text in enumerate(
        [
            "My bike lock code is Vorpalquix-4471, written behind the boiler",
            KEPT,
            "Remind me that the Vorpalquix spare key hangs in the garage",
        ]
    ):
        post(
            api, "/api/v1/turns", {"session_id": "s1", "role": "user", "text": text, "ref": f"t{i}"}
        )
    post(api, "/api/v1/memory/remember_fact", {"text": "The user's locker is tagged Vorpalquix"})
    post(
        api,
        "/api/v1/memory/save",
        {"block": "user", "action": "add", "text": "Keeps the Vorpalquix code behind the boiler"},
    )


def test_hard_forget_leaves_no_byte_of_the_text_in_the_file_or_wal(sqlite_only, client_for):  # type: ignore[no-untyped-def]
    _, key = create_api_key(space_name="bytes")
    api = client_for(key)
    fill(api, "bytes")
    before = database_bytes()
    assert CANARY in before  # the check below can fail
    assert KEPT.encode() in before

    answer = post(api, "/api/v1/memory/forget", {"query": "vorpalquix", "hard": True})
    assert answer["forgotten"] >= 3  # the fact, the two turns
    report = answer["verification"]
    assert report["verified"] is True, [c for c in report["checked"] if c["found"]]
    storage = report["storage"]
    assert storage["secure_delete"] is True and storage["checkpoint_complete"] is True
    assert storage["wal_bytes"] == 0
    assert "memory_item_fts" in storage["fts_merged"] and "memory_turn_fts" in storage["fts_merged"]
    places = {c["place"] for c in report["checked"]}
    assert places >= {"table", "fts", "query", "vectors", "cache", "mirror", "files"}
    assert {c["name"] for c in report["checked"] if c["place"] == "database_file"} == {
        Path(connection.settings_dict["NAME"]).name,
        Path(connection.settings_dict["NAME"]).name + "-wal",
    }

    after = database_bytes()
    assert CANARY not in after
    assert CANARY.upper() not in after.upper()
    assert KEPT.encode() in after  # what was not forgotten is still there
    mirror_files = list(Path(str(connection.settings_dict["NAME"])).parent.glob("**/USER.md"))
    for path in mirror_files:
        assert CANARY not in path.read_bytes()
    # The core block and its history no longer hold it either.
    block = api.get("/api/v1/core/user").json()
    assert "orpalquix" not in block["text"]


def test_a_wipe_is_vacuumed_audited_and_leaves_no_byte(sqlite_only, client_for):  # type: ignore[no-untyped-def]
    _, key = create_api_key(space_name="wiped")
    api = client_for(key)
    fill(api, "wiped")
    _, other_key = create_api_key(space_name="neighbour")
    post(client_for(other_key), "/api/v1/memory/remember_fact", {"text": KEPT})
    assert CANARY in database_bytes()

    answer = post(api, "/api/v1/memory/forget", {"everything": True, "confirm": "wiped"})
    report = answer["verification"]
    assert report["verified"] is True, [c for c in report["checked"] if c["found"]]
    assert report["storage"]["vacuum"] is True and report["storage"]["wal_bytes"] == 0
    after = database_bytes()
    assert CANARY not in after and CANARY.upper() not in after.upper()
    assert KEPT.encode() in after

    from memory.models import AuditEvent

    (event,) = AuditEvent.objects.filter(space__name="wiped")
    assert event.action == "wipe" and event.detail["rows"] == answer["forgotten"]
    assert b"orpalquix" not in str(event.detail).encode().lower()


def test_after_commit_the_database_is_told_to_reclaim_on_either_backend(client_for):  # type: ignore[no-untyped-def]
    _, key = create_api_key(space_name="reclaim")
    api = client_for(key)
    fact = post(api, "/api/v1/memory/remember_fact", {"text": "The Vorpalquix vault opens at dawn"})
    answer = post(api, "/api/v1/memory/forget", {"item_id": fact["id"], "hard": True})
    report = answer["verification"]
    assert report["verified"] is True, [c for c in report["checked"] if c["found"]]
    storage = report["storage"]
    assert storage["done"] is True and storage["database"] == connection.vendor
    if connection.vendor == "postgresql":
        assert "memory_memoryitem" in storage["vacuumed"]
        assert any("PostgreSQL" in note for note in report["not_checked"])
    else:
        assert storage["fts_merged"] == ["memory_item_fts"] and storage["wal_bytes"] == 0
