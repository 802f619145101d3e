"""GET /api/v1/palace/rooms and /api/v1/palace/refurb: what memory_tour
answers, over REST, documented with the shared error responses."""

from __future__ import annotations

import pytest

from engram_site.api import api as ninja_api
from memory.services import facts

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::UserWarning")]

WORDS = "amber basalt cobalt dahlia ember fjord granite heron".split()


@pytest.fixture(autouse=True)
def _small_rooms(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror", "ROOM_CAPACITY": 3}


def _tour(api):  # type: ignore[no-untyped-def]
    response = api.post("/api/v1/tools/memory_tour", {}, content_type="application/json")
    assert response.status_code == 200
    return response.json()


def test_rooms_and_refurb_are_the_tours(space, api):  # type: ignore[no-untyped-def]
    assert api.get("/api/v1/palace/rooms").json() == {"rooms": []}
    for i, word in enumerate(WORDS):
        facts.save_fact(space=space, text=f"Shelf item {word} is kept in the drawer number {i}")
    facts.save_fact(space=space, text="Prefers window seats", kind="preference")
    tour = _tour(api)
    rooms = api.get("/api/v1/palace/rooms")
    assert rooms.status_code == 200 and rooms.json() == {"rooms": tour["rooms"]}
    assert [r["room"] for r in rooms.json()["rooms"]] == ["Fact Hall-3", "Preference Pavilion"]
    refurb = api.get("/api/v1/palace/refurb")
    assert refurb.status_code == 200 and refurb.json() == {"refurb": tour["refurb"]}
    low = refurb.json()["refurb"]
    assert low and all(r["score"] < 0.5 and "#" in r["coordinate"] for r in low)
    assert len(api.get("/api/v1/palace/refurb", {"limit": 1}).json()["refurb"]) == 1


def test_bad_input_and_no_key(api, client):  # type: ignore[no-untyped-def]
    bad = api.get("/api/v1/palace/refurb", {"limit": 0})
    assert bad.status_code == 422 and "limit" in bad.content.decode()
    assert client.get("/api/v1/palace/rooms").status_code == 401


@pytest.mark.parametrize("path", ["/api/v1/palace/rooms", "/api/v1/palace/refurb"])
def test_documented_with_error_responses(path):  # type: ignore[no-untyped-def]
    op = ninja_api.get_openapi_schema()["paths"][path]["get"]
    assert op["description"] and 200 in op["responses"]
    for status in (401, 429):
        ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
        assert ref.endswith("ErrorOut")
