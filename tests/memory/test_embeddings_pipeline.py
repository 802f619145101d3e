"""Step 7 of the write pipeline: a turn posted through the API leaves vectors
for the items it produced and for the turn itself, skipped turns included; a
backend that is down or refuses never fails the job."""

from __future__ import annotations

import itertools
import socket

import pytest

from memory import embeddings
from memory.models import AuditEvent, IngestJob, MemoryItem, MemoryVector, Turn
from memory.search import vectors
from tests.fakes.embedding_server import embed_server, use_embeddings  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=False)
_refs = itertools.count()


@pytest.fixture
def say(api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    def post(text: str) -> Turn:
        body = {"session_id": "s1", "role": "user", "text": text, "ref": f"p{next(_refs)}"}
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/api/v1/turns", body, content_type="application/json")
        assert response.status_code == 202, response.content
        return Turn.objects.get(pk=int(response.json()["id"]))

    return post


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_the_pipeline_embeds_its_items_and_the_turn(space, say, use_embeddings) -> None:  # noqa: F811
    use_embeddings("local")
    turn = say("Hi there, my name is Sam Carter and I live in Lisbon.")
    items = list(MemoryItem.objects.filter(space=space).values_list("pk", flat=True))
    assert items, "the rules extractor should have written facts"
    model = embeddings.model_name()
    stored = MemoryVector.objects.filter(space=space, model=model)
    assert set(stored.exclude(item=None).values_list("item_id", flat=True)) == set(items)
    assert list(stored.exclude(turn=None).values_list("turn_id", flat=True)) == [turn.pk]
    event = AuditEvent.objects.get(space=space, action="embed", target_id=str(turn.pk))
    assert event.detail["embedded_turns"] == 1 and event.detail["embedded_items"] == len(items)
    # No reembed pass needed: the turn is found by meaning right away.
    hits = vectors.search(space_id=space.pk, query="Sam's home city", limit=5)
    assert ("turn", turn.pk) in {(h.target, h.id) for h in hits}


def test_a_turn_the_salience_gate_skips_is_embedded_too(space, say, use_embeddings) -> None:  # noqa: F811
    use_embeddings("local")
    turn = say("ok")
    turn.refresh_from_db()
    assert turn.skip_reason, "a bare 'ok' should not be worth extracting"
    assert MemoryVector.objects.filter(space=space, turn=turn).count() == 1


def test_nothing_is_embedded_when_embeddings_are_off(space, say, use_embeddings) -> None:  # noqa: F811
    use_embeddings("none")
    say("Hi there, my name is Sam Carter and I live in Lisbon.")
    assert MemoryVector.objects.count() == 0


def test_a_backend_that_is_down_does_not_fail_the_job(space, say, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=_dead_url(), model="m", timeout=0.5)
    turn = say("Hi there, my name is Sam Carter and I live in Lisbon.")
    job = IngestJob.objects.get(turn=turn)
    assert job.status == "done"
    assert MemoryItem.objects.filter(space=space).exists()
    assert MemoryVector.objects.count() == 0
    event = AuditEvent.objects.get(space=space, action="embed", target_id=str(turn.pk))
    assert "EmbeddingsUnavailable" in event.detail["error"]
    # The catch-up finds what step 7 could not embed.
    use_embeddings("local")
    assert embeddings.pending_count(space_id=space.pk) >= 2


def test_a_dimension_mismatch_does_not_fail_the_job(
    space,
    say,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    say("Hi there, my name is Sam Carter and I live in Lisbon.")
    embed_server.dim = 24  # same model name, another dimension
    turn = say("I work as a nurse at the city hospital.")
    assert IngestJob.objects.get(turn=turn).status == "done"
    event = AuditEvent.objects.get(space=space, action="embed", target_id=str(turn.pk))
    assert "EMBEDDER_DIMENSION_MISMATCH" in event.detail["error"]
    assert not MemoryVector.objects.filter(turn=turn).exists()
