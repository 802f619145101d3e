"""Storing and searching vectors: the dimension guard, the reembed command
(resumable after interruption), vector search visibility rules and the
incremental matrix cache."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memory import embeddings
from memory.embeddings import DimensionMismatch
from memory.models import MemoryItem, MemoryVector, Session, SessionSummary, Space, Turn
from memory.search import vectors
from memory.timeview import TimeView
from tests.fakes.embedding_server import embed_server, use_embeddings  # noqa: F401


def _items(space: Space, texts: list[str], **fields: object) -> list[MemoryItem]:
    return [MemoryItem.objects.create(space=space, text=t, **fields) for t in texts]


def _turns(space: Space, texts: list[str]) -> list[Turn]:
    session, _ = Session.objects.get_or_create(space=space, external_id="s1")
    return [
        Turn.objects.create(space=space, session=session, role="user", text=t, ref=f"r{i}")
        for i, t in enumerate(texts)
    ]


def test_index_items_stores_one_vector_per_item_and_model(
    space,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    items = _items(space, ["Anna lives in Berlin", "Anna likes tea"])
    embeddings.index_items(space_id=space.id, item_ids=[i.id for i in items])
    embeddings.index_items(space_id=space.id, item_ids=[i.id for i in items])  # idempotent
    rows = MemoryVector.objects.filter(space=space)
    assert rows.count() == 2
    assert {r.model for r in rows} == {"ollama:m"} and {r.dim for r in rows} == {16}
    assert len(embed_server.texts_embedded()) == 2
    vec = embeddings.from_blob(rows[0].vec, rows[0].dim)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5


def test_index_items_is_a_no_op_when_off(space, use_embeddings) -> None:  # noqa: F811
    use_embeddings("none")
    items = _items(space, ["Anna lives in Berlin"])
    embeddings.index_items(space_id=space.id, item_ids=[items[0].id])
    assert MemoryVector.objects.count() == 0


def test_a_changed_dimension_is_refused_on_write(space, embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="m")
    first, second = _items(space, ["Anna lives in Berlin", "Bob plays chess"])
    embeddings.index_items(space_id=space.id, item_ids=[first.id])
    # The same model name now answers 8-dim vectors (a different model was
    # pulled under that tag): refuse, never truncate or pad.
    embed_server.script(("dim", 8))
    with pytest.raises(DimensionMismatch) as err:
        embeddings.index_items(space_id=space.id, item_ids=[second.id])
    assert "16" in str(err.value) and "8" in str(err.value)
    assert err.value.code == "EMBEDDER_DIMENSION_MISMATCH"
    assert not MemoryVector.objects.filter(item=second).exists()


def test_a_changed_dimension_is_refused_on_compare(space, embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="m")
    (item,) = _items(space, ["Anna lives in Berlin"])
    embeddings.index_items(space_id=space.id, item_ids=[item.id])
    embed_server.script(("dim", 8))
    with pytest.raises(DimensionMismatch, match="dimension 16.*dimension 8"):
        vectors.search(space_id=space.id, query="where does Anna live", limit=5)


def test_vector_search_ranks_and_hides_what_recall_may_not_show(
    space,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    live, quarantined, expired, other = _items(
        space,
        [
            "Anna lives in Berlin",
            "Anna lives in Berlin now really",
            "Anna lives in Paris",
            "the weather is cold",
        ],
    )
    MemoryItem.objects.filter(pk=quarantined.pk).update(screen_status="flagged")
    MemoryItem.objects.filter(pk=expired.pk).update(expired_at=timezone.now())
    (turn,) = _turns(space, ["Anna lives in Berlin since May"])
    embeddings.reembed_pending(space_id=space.id, limit=100)
    hits = vectors.search(space_id=space.id, query="Anna lives in Berlin", limit=10)
    found = {(h.target, h.id) for h in hits}
    assert ("item", live.id) in found and ("turn", turn.id) in found
    assert ("item", quarantined.id) not in found and ("item", expired.id) not in found
    assert hits[0] == vectors.VectorHit("item", live.id, pytest.approx(1.0, abs=1e-5))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # as_of between its creation and its expiry sees the fact that was true then
    hour_ago = timezone.now() - timezone.timedelta(hours=1)
    MemoryItem.objects.filter(pk=expired.pk).update(created_at=hour_ago)
    then = hour_ago + timezone.timedelta(minutes=30)
    old = vectors.search(
        space_id=space.id, query="Anna Paris", limit=10, when=TimeView(known_at=then)
    )
    assert [(h.target, h.id) for h in old] == [("item", expired.id)]
    items_only = vectors.similar_to_text("Anna lives in Berlin", space_id=space.id, limit=10)
    assert {h.target for h in items_only} == {"item"}
    assert other.id in {h.id for h in items_only}


def test_vector_search_never_crosses_spaces(space, embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="m")
    elsewhere = Space.objects.create(name="elsewhere")
    (mine,) = _items(space, ["Anna lives in Berlin"])
    (theirs,) = _items(elsewhere, ["Anna lives in Berlin"])
    for s in (space, elsewhere):
        embeddings.reembed_pending(space_id=s.id, limit=10)
    hits = vectors.search(space_id=space.id, query="Anna Berlin", limit=10)
    assert [(h.target, h.id) for h in hits] == [("item", mine.id)]
    assert theirs.id not in {h.id for h in hits}


def test_the_matrix_cache_grows_incrementally_and_notices_deletes(
    monkeypatch,
    space,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    (a,) = _items(space, ["Anna lives in Berlin"])
    embeddings.index_items(space_id=space.id, item_ids=[a.id])
    assert [h.id for h in vectors.search(space_id=space.id, query="Berlin", limit=5)] == [a.id]
    key = (space.id, "ollama:m")
    cached = vectors._cache[key]
    first_matrix = cached.matrix
    (b,) = _items(space, ["Berlin is cold in winter"])
    embeddings.index_items(space_id=space.id, item_ids=[b.id])
    hits = vectors.search(space_id=space.id, query="Berlin", limit=5)
    assert {h.id for h in hits} == {a.id, b.id}
    assert cached.count == 2 and cached.matrix is not first_matrix
    assert np.array_equal(cached.matrix[0], first_matrix[0])  # appended, old row kept
    # A hard delete removes the item and (by cascade) its vector. Until the
    # next recount the row lingers in the matrix, but is never returned.
    MemoryItem.objects.filter(pk=a.pk).delete()
    hits = vectors.search(space_id=space.id, query="Berlin", limit=5)
    assert [h.id for h in hits] == [b.id]
    monkeypatch.setattr(vectors, "RECOUNT_SECONDS", 0.0)
    hits = vectors.search(space_id=space.id, query="Berlin", limit=5)
    assert [h.id for h in hits] == [b.id]
    assert cached.count == 1


def test_reembed_resumes_after_an_interruption(space, embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("openai_compat", url=embed_server.url, model="m", batch=5)
    texts = [f"fact number {i} about topic {i % 3}" for i in range(12)]
    _items(space, texts[:8])
    _turns(space, texts[8:])
    session = Session.objects.get(space=space)
    SessionSummary.objects.create(space=space, session=session, text="a summary of s1")
    # The probe and the first batch go through, then the backend dies on the
    # second batch (after its retries): the first batch is kept and the
    # command says how to resume.
    embed_server.script(("ok",), ("ok",), ("status", 500), ("status", 500), ("status", 500))
    out = io.StringIO()
    with pytest.raises(CommandError, match="stopped after 5 rows.*resume"):
        call_command("reembed", "--no-progress", stdout=out, stderr=io.StringIO())
    assert MemoryVector.objects.filter(space=space).count() == 5
    embed_server.requests.clear()
    call_command("reembed", "--no-progress", stdout=out, stderr=io.StringIO())
    assert MemoryVector.objects.filter(space=space).count() == 13
    embedded = [t for t in embed_server.texts_embedded() if t != "dimension probe"]
    assert len(embedded) == 8  # only what was missing, nothing twice
    assert "embedded 8 rows" in out.getvalue()


def test_reembed_after_a_model_switch_and_prune(space, embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="old")
    _items(space, ["Anna lives in Berlin", "Bob plays chess"])
    call_command("reembed", "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    use_embeddings("ollama", url=embed_server.url, model="new")
    assert embeddings.pending_count(space_id=space.id) == 2
    out = io.StringIO()
    call_command(
        "reembed",
        "--no-progress",
        "--prune",
        "--space",
        space.name,
        stdout=out,
        stderr=io.StringIO(),
    )
    assert set(MemoryVector.objects.values_list("model", flat=True)) == {"ollama:new"}
    assert "pruned 2 vectors" in out.getvalue()


def test_reembed_refuses_a_dimension_change_unless_forced(
    space,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    _items(space, ["Anna lives in Berlin", "Bob plays chess"])
    call_command("reembed", "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    embed_server.dim = 8
    with pytest.raises(CommandError, match="EMBEDDER_DIMENSION_MISMATCH.*16.*8"):
        call_command("reembed", "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    assert set(MemoryVector.objects.values_list("dim", flat=True)) == {16}
    call_command("reembed", "--no-progress", "--force", stdout=io.StringIO(), stderr=io.StringIO())
    assert list(MemoryVector.objects.values_list("dim", flat=True)) == [8, 8]
