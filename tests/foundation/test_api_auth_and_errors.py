"""The API root: bearer keys bound to spaces, 4xx bodies that name the field,
413 for oversized bodies."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client

from memory.models import ApiKey, Space
from memory.services.spaces import create_api_key, revoke_api_key

pytestmark = pytest.mark.django_db

TURN = {"session_id": "s1", "role": "user", "text": "Anna moved to Lisbon in May."}


def post(client: Client, path: str, body: object):  # type: ignore[no-untyped-def]
    return client.post(path, json.dumps(body), content_type="application/json")


def test_it_answers_health_without_a_key(client):
    response = client.get("/api/v1/health")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer ",
        "Bearer eng_nothere_abcdef",
        "Bearer not-even-our-format",
        "Basic dXNlcjpwYXNz",
    ],
)
def test_it_refuses_missing_and_unknown_keys(api_key, header):
    client = Client(HTTP_AUTHORIZATION=header) if header else Client()
    for response in (client.get("/api/v1/status"), post(client, "/api/v1/turns", TURN)):
        assert response.status_code == 401
        assert "API key" in response.json()["detail"]


def test_it_refuses_a_key_with_the_right_prefix_and_a_wrong_secret(api_key, client_for):
    forged = api_key[: api_key.rindex("_") + 1] + "x" * 43
    assert client_for(forged).get("/api/v1/status").status_code == 401


def test_it_refuses_a_revoked_key(api, api_key, space):
    assert api.get("/api/v1/status").status_code == 200
    revoke_api_key(key=ApiKey.objects.get(space=space))
    assert api.get("/api/v1/status").status_code == 401
    assert post(api, "/api/v1/turns", TURN).status_code == 401


def test_it_keeps_each_key_inside_its_space(api, client_for):
    _, other_key = create_api_key(space_name="other-space")
    other = client_for(other_key)
    assert post(api, "/api/v1/turns", TURN).status_code == 202
    assert post(api, "/api/v1/turns", {**TURN, "session_id": "s2"}).status_code == 202

    mine, theirs = api.get("/api/v1/status").json(), other.get("/api/v1/status").json()
    assert (mine["space"], mine["turns"], mine["sessions"]) == ("test-space", 2, 2)
    assert (theirs["space"], theirs["turns"], theirs["sessions"]) == ("other-space", 0, 0)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**TURN, "role": "system"}, "role"),
        ({k: v for k, v in TURN.items() if k != "text"}, "text"),
        ({**TURN, "text": ""}, "text"),
        ({**TURN, "session_id": "x" * 201}, "session_id"),
        ({**TURN, "ts": "yesterday-ish"}, "ts"),
        ({**TURN, "metadata": "not an object"}, "metadata"),
    ],
)
def test_it_names_the_bad_field_in_a_422(api, body, field):
    response = post(api, "/api/v1/turns", body)
    assert response.status_code == 422
    detail = response.json()
    assert field in detail["detail"]
    assert any(error["field"] == field for error in detail["errors"])


def test_it_names_the_position_of_a_bad_turn_in_a_batch(api):
    response = post(api, "/api/v1/turns/batch", {"turns": [TURN, {**TURN, "role": "robot"}]})
    assert response.status_code == 422
    assert "turns.1.role" in response.json()["detail"]


def test_it_answers_4xx_for_a_body_that_is_not_json(api):
    response = api.post("/api/v1/turns", "{not json", content_type="application/json")
    assert 400 <= response.status_code < 500
    assert "detail" in response.json()


def test_it_refuses_an_oversized_declared_body_before_reading_it(api, settings):
    settings.MAX_BODY_BYTES = 2048
    big = {**TURN, "text": "x" * 4000}
    response = post(api, "/api/v1/turns", big)
    assert response.status_code == 413
    assert "2048" in response.json()["detail"]
    # Just under the limit still goes through.
    assert post(api, "/api/v1/turns", {**TURN, "text": "y" * 1500}).status_code == 202


def test_create_api_key_prints_only_the_key_and_makes_the_space(capsys, client_for):
    call_command("create_api_key", "--space", "brand-new")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("eng_")
    assert Space.objects.filter(name="brand-new").exists()
    assert client_for(lines[0]).get("/api/v1/status").json()["space"] == "brand-new"
    # A second key for the same space does not make another space.
    call_command("create_api_key", "--space", "brand-new")
    assert Space.objects.filter(name="brand-new").count() == 1
    assert ApiKey.objects.filter(space__name="brand-new").count() == 2


def test_create_api_key_refuses_a_space_name_that_is_not_a_slug():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="slug"):
        call_command("create_api_key", "--space", "two words")
    assert not Space.objects.filter(name="two words").exists()
