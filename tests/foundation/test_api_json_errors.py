"""Everything under /api/ answers JSON, errors included, and says what is
wrong: bodies that are not UTF-8 or not JSON, strings holding NUL, unknown
paths, wrong methods, oversized bodies, server errors. Saves that change
nothing answer 200 with `changed: false`."""

from __future__ import annotations

import json

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

TURN = {"session_id": "s1", "role": "user", "text": "Anna moved to Lisbon in May."}


def raw(client: Client, path: str, body: bytes, method: str = "post"):  # type: ignore[no-untyped-def]
    return getattr(client, method)(path, body, content_type="application/json")


def detail(response) -> str:  # type: ignore[no-untyped-def]
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    return str(response.json()["detail"])


def test_it_says_where_malformed_json_breaks(api):
    response = raw(api, "/api/v1/turns", b'{"session_id": "s1", "role": ')
    assert response.status_code == 400
    assert detail(response).startswith("the body is not valid JSON: Expecting value")
    assert "line 1, column 30" in detail(response)


def test_it_says_a_body_is_not_utf8_and_where(api):
    body = '{"session_id": "s1", "role": "user", "text": "café"}'.encode("latin-1")
    response = raw(api, "/api/v1/turns/batch", body)
    assert response.status_code == 400
    assert "not UTF-8" in detail(response)
    offset = body.index("é".encode("latin-1"))
    assert f"0xe9 at offset {offset}" in detail(response)


def test_it_refuses_nul_in_a_string_and_names_the_field(api):
    body = json.dumps({"turns": [TURN, {**TURN, "text": "a\x00b"}]}).encode()
    response = raw(api, "/api/v1/turns/batch", body)
    assert response.status_code == 422
    assert detail(response).startswith("turns.1.text: text may not contain the NUL character")
    assert api.get("/api/v1/status").json()["turns"] == 0


def test_an_empty_body_names_the_body_not_an_argument(api):
    response = raw(api, "/api/v1/turns", b"")
    assert response.status_code == 422
    assert detail(response) == "body: Field required"


def test_a_valid_body_with_an_escaped_character_still_works(api):
    body = json.dumps({**TURN, "text": "tab\tand \\u0000 spelled out"}).encode()
    assert raw(api, "/api/v1/turns", body).status_code == 202


@pytest.mark.parametrize(
    "path", ["/api/v1/nope", "/api/v1/status/", "/api/v2/status", "/api/", "/api/v1/core/x/y/z"]
)
def test_unknown_paths_answer_404_json(api, path):
    response = api.get(path)
    assert response.status_code == 404
    assert detail(response) == (
        f"no such endpoint: GET {path} (the API is described at /api/v1/docs)"
    )


def test_unknown_paths_answer_json_without_a_key_too(client):
    response = client.post("/api/v1/nope", "{}", content_type="application/json")
    assert response.status_code == 404 and "no such endpoint" in detail(response)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("get", "/api/v1/turns", "POST"),
        ("delete", "/api/v1/status", "GET"),
        ("post", "/api/v1/context", "GET"),
        ("patch", "/api/v1/core/user", "GET, PUT"),
    ],
)
def test_wrong_methods_answer_405_json_with_allow(api, method, path, allowed):
    response = getattr(api, method)(path)
    assert response.status_code == 405
    assert detail(response) == f"{method.upper()} is not allowed on {path}; allowed: {allowed}"
    assert response["Allow"] == allowed


def test_oversized_bodies_answer_413_json(api, settings):
    settings.MAX_BODY_BYTES = 2048
    response = raw(api, "/api/v1/turns", json.dumps({**TURN, "text": "x" * 4000}).encode())
    assert response.status_code == 413
    assert "the limit is 2048" in detail(response)


def test_a_server_error_under_api_is_json_and_logged(api, monkeypatch, caplog):
    # The one fault injected on purpose: any bug in a service looks like this.
    from memory import selectors

    def broken(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")

    monkeypatch.setattr(selectors, "space_status", broken)
    client = Client(HTTP_AUTHORIZATION=api.defaults["HTTP_AUTHORIZATION"])
    client.raise_request_exception = False
    response = client.get("/api/v1/status")
    assert response.status_code == 500
    assert detail(response) == "internal server error; it has been logged"
    assert any("a bug" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_a_disallowed_host_under_api_is_json(api):
    response = api.get("/api/v1/health", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert detail(response) == "bad request: GET /api/v1/health"


def test_pages_outside_api_keep_their_html(client):
    response = client.get("/no-such-page/")
    assert response.status_code in (302, 404)
    assert not response.get("Content-Type", "").startswith("application/json")


def test_the_docs_page_is_html(client):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")


# --- saves that change nothing ---------------------------------------------------------


def test_a_core_save_that_changes_nothing_says_so(api):
    body = {"block": "user", "action": "add", "text": "Prefers short answers."}
    first = api.post("/api/v1/memory/save", body, content_type="application/json")
    again = api.post("/api/v1/memory/save", body, content_type="application/json")
    assert (first.status_code, first.json()["changed"]) == (200, True)
    assert (again.status_code, again.json()["changed"]) == (200, False)
    assert again.json()["ok"] is True
    assert again.json()["version"] == first.json()["version"]


def test_a_fact_saved_twice_is_a_noop_the_second_time(api):
    body = {"text": "Anna lives in Lisbon.", "subject": "Anna", "predicate": "lives_in"}
    body["object"] = "Lisbon"
    first = api.post("/api/v1/memory/facts", body, content_type="application/json")
    again = api.post("/api/v1/memory/facts", body, content_type="application/json")
    assert (first.status_code, first.json()["action"], first.json()["changed"]) == (
        200,
        "ADD",
        True,
    )
    assert (again.status_code, again.json()["action"], again.json()["changed"]) == (
        200,
        "NOOP",
        False,
    )


def test_putting_the_same_core_text_makes_no_version(api):
    body = json.dumps({"text": "Name: Sam"})
    first = api.put("/api/v1/core/user", body, content_type="application/json")
    again = api.put("/api/v1/core/user", body, content_type="application/json")
    assert (first.status_code, first.json()["changed"]) == (200, True)
    assert (again.status_code, again.json()["changed"]) == (200, False)
    assert again.json()["version"] == first.json()["version"]
    assert "changed" not in api.get("/api/v1/core/user").json() or (
        api.get("/api/v1/core/user").json()["changed"] is None
    )
