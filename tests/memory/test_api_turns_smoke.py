import pytest


@pytest.mark.django_db
def test_it_accepts_a_turn_once_per_ref(api, space):
    body = {"session_id": "s1", "role": "user", "text": "I live in Lisbon now", "ref": "t1"}
    first = api.post("/api/v1/turns", body, content_type="application/json")
    again = api.post("/api/v1/turns", body, content_type="application/json")
    assert first.status_code == 202 and first.json()["queued"] is True
    assert again.status_code == 202 and again.json()["queued"] is False
    assert first.json()["id"] == again.json()["id"]
    assert space.turns.count() == 1
