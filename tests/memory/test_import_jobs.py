"""Long imports run as background jobs on the ingest outbox: 202 with a job
and a status URL, progress as chunks commit, resumed where the last chunk
committed when a worker dies, and the same result as an import in one go.

In-process, with Celery eager (tests/conftest.py): the job runs when its
transaction commits. The real worker and a concurrent writer are in
tests/integration/test_import_worker.py."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Entity, IngestJob, MemoryItem, Relation, Space, Turn
from memory.services import outbox
from memory.services.imports import graph as graph_import
from memory.services.imports import jobs as import_jobs
from memory.services.imports import space as space_import
from memory.services.pipeline import run_job
from memory.services.spaces import create_api_key

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):  # type: ignore[no-untyped-def]
    # The limits scaled down (1,000 rows in a request, 250 rows a chunk), so
    # the same paths run on dumps a tenth the size.
    monkeypatch.setattr(import_jobs, "SYNC_ROWS", 100)
    monkeypatch.setattr(graph_import, "CHUNK", 25)


# Cities, people and tools with descriptions, linked in a ring: names vary
# so entity matching and fact hashing do real work.
KINDS = [("person", "Ada Lovelace {i:04d}"), ("place", "Porto {i:04d}"), ("tool", "Hammer-{i:04d}")]


def dump(n: int) -> dict:
    nodes = []
    for i in range(n):
        type_, name = KINDS[i % 3]
        nodes.append(
            {"id": f"n{i}", "name": name.format(i=i), "type": type_, "description": f"entry {i}"}
        )
    edges = [
        {"source": f"n{i}", "target": f"n{(i + 1) % n}", "relation": "knows about"}
        for i in range(n)
    ]
    return {"nodes": nodes, "edges": edges}


def counts_of(space: Space) -> tuple[int, int, int]:
    return (
        Entity.objects.filter(space=space).count(),
        MemoryItem.objects.filter(space=space).count(),
        Relation.objects.filter(space=space).count(),
    )


def test_a_large_graph_dump_answers_202_and_its_job_imports_it(api, space):
    data = dump(60)  # 120 rows: over the in-request limit
    response = api.post("/api/v1/import/graph", data, content_type="application/json")
    assert response.status_code == 202, response.content
    job = response.json()
    assert job["status"] == "pending" and job["total"] == 120
    assert job["status_url"] == f"/api/v1/import/jobs/{job['job_id']}"
    # Eager Celery ran it on commit; the status URL shows the outcome.
    status = api.get(job["status_url"]).json()
    assert status["status"] == "done" and status["done"] == status["total"] == 120
    assert status["result"]["counts"]["entities_added"] == 60
    assert status["result"]["counts"]["relations_added"] == 60
    assert counts_of(space) == (60, 120, 60)
    # Done jobs drop their payload; the job row stays as a record.
    assert IngestJob.objects.get(pk=job["job_id"]).payload == {}
    # A small dump still answers 200 in the request, as before.
    small = api.post("/api/v1/import/graph", dump(3), content_type="application/json")
    assert small.status_code == 200 and "counts" in small.json()


def test_a_bad_row_is_refused_before_any_job_or_write(api, space):
    data = dump(60)
    data["edges"][30] = {"source": "n1"}
    response = api.post("/api/v1/import/graph", data, content_type="application/json")
    assert response.status_code == 422 and "edges[30]" in response.json()["detail"]
    assert not IngestJob.objects.exists() and counts_of(space) == (0, 0, 0)


def test_a_background_dry_run_counts_what_a_real_run_writes_and_writes_nothing(api, space):
    data = dump(50)
    # Repeats across chunks: the dry run must count them once, as a real run does.
    data["nodes"] += data["nodes"][:10]
    data["edges"] += data["edges"][:10]
    dry = api.post(
        "/api/v1/import/graph",
        {**data, "dry_run": True, "background": True},
        content_type="application/json",
    )
    assert dry.status_code == 202
    planned = api.get(dry.json()["status_url"]).json()["result"]
    assert planned["dry_run"] is True and counts_of(space) == (0, 0, 0)
    real = api.post(
        "/api/v1/import/graph", {**data, "background": True}, content_type="application/json"
    )
    done = api.get(real.json()["status_url"]).json()["result"]
    assert planned["counts"] == done["counts"]


def test_a_job_whose_worker_died_resumes_where_its_last_chunk_committed(space, monkeypatch):
    data = dump(40)  # 80 rows, chunks of 25
    # Made, never sent: this test plays the worker, and kills its first run
    # in its third chunk.
    job = IngestJob.objects.create(
        space=space,
        kind=import_jobs.GRAPH,
        idempotency_key="import_graph:resume",
        payload={"data": data},
        progress={"done": 0, "total": 80},
    )
    real_import, calls = graph_import.import_graph, {"n": 0}

    def dies_after_two_chunks(**kwargs):  # type: ignore[no-untyped-def]
        report = kwargs.pop("progress")

        def progress(done, total, rep):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt  # the worker is gone mid-chunk
            report(done, total, rep)

        return real_import(progress=progress, **kwargs)

    monkeypatch.setattr(graph_import, "import_graph", dies_after_two_chunks)
    with pytest.raises(KeyboardInterrupt):
        run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "running" and job.progress["done"] == 50
    # Two chunks of 25 rows committed: every node and the first 10 edges.
    assert counts_of(space) == (40, 50, 10)
    monkeypatch.setattr(graph_import, "import_graph", real_import)
    # The lease runs out; the sweeper re-sends it and a worker resumes.
    IngestJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert outbox.sweep() == 1
    job.refresh_from_db()
    assert job.status == "done" and job.attempts == 2
    assert counts_of(space) == (40, 80, 40)
    assert job.result["counts"]["entities_added"] == 40
    assert job.result["counts"]["relations_added"] == 40


def test_a_large_export_imports_in_slices_as_one_import_would(api, space, client_for, monkeypatch):
    from memory.services.turns import TurnData, accept_turns

    turns = [
        TurnData(
            session_id=f"s{i % 4}", role="user", text=f"note {i} about the garden", ref=f"r{i}"
        )
        for i in range(60)
    ]
    accept_turns(space=space, turns=turns)
    export = api.get("/api/v1/export").json()
    monkeypatch.setattr(space_import, "SLICE_TURNS", 25)
    # Four sessions of 15 turns, at most 25 turns a slice: one session each, then the rest.
    assert len(space_import.slices(export)) == 5

    _, key = create_api_key(space_name="copy")
    copy = client_for(key)
    response = copy.post("/api/v1/import?background=true", export, content_type="application/json")
    assert response.status_code == 202, response.content
    status = copy.get(response.json()["status_url"]).json()
    assert status["status"] == "done" and status["done"] == status["total"] == 5
    target = Space.objects.get(name="copy")
    assert Turn.objects.filter(space=target).count() == 60
    assert status["result"]["created"]["turns"] == 60
    # Again: everything is found, nothing added (idempotent across slices).
    again = copy.post("/api/v1/import?background=true", export, content_type="application/json")
    assert copy.get(again.json()["status_url"]).json()["result"]["created"] == {}
    assert Turn.objects.filter(space=target).count() == 60


def _bad_halfway(export: dict) -> dict:
    ts = "2024-01-01T00:00:00+00:00"
    good = [
        {
            "external_id": f"s{i}",
            "started_at": ts,
            "last_turn_at": ts,
            "turns": [
                {"role": "user", "text": f"note {i}.{j}", "ts": ts, "created_at": ts, "ref": f"{j}"}
                for j in range(20)
            ],
        }
        for i in range(3)
    ]
    bad = {
        "external_id": "x",
        "started_at": ts,
        "last_turn_at": ts,
        "turns": [{"role": "user", "text": "hi", "ts": "soon", "created_at": ts, "ref": "a"}],
    }
    return {**export, "sessions": [*good, bad]}


def test_an_export_bad_halfway_is_refused_whole_before_any_job(api, space, monkeypatch):
    monkeypatch.setattr(space_import, "SLICE_TURNS", 25)
    export = _bad_halfway(api.get("/api/v1/export").json())
    assert len(space_import.slices(export)) > 2
    response = api.post("/api/v1/import?background=true", export, content_type="application/json")
    assert response.status_code == 422, response.content
    assert "sessions[3].turns[0].ts" in response.content.decode()
    assert not IngestJob.objects.filter(space=space, kind="import_space").exists()
    assert Turn.objects.filter(space=space).count() == 0


def test_a_job_with_a_bad_row_halfway_stores_nothing(api, space, monkeypatch):
    monkeypatch.setattr(space_import, "SLICE_TURNS", 25)
    export = _bad_halfway(api.get("/api/v1/export").json())
    job = import_jobs.start(
        space=space, kind=import_jobs.SPACE, data=export, total=len(space_import.slices(export))
    )
    status = api.get(f"/api/v1/import/jobs/{job.pk}").json()
    assert status["status"] == "dead"
    assert status["error"].startswith("sessions[3].turns[0].ts")
    assert Turn.objects.filter(space=space).count() == 0


def test_an_import_job_of_another_space_is_404(api, client_for):
    response = api.post(
        "/api/v1/import/graph", {**dump(2), "background": True}, content_type="application/json"
    )
    _, other = create_api_key(space_name="other")
    assert client_for(other).get(response.json()["status_url"]).status_code == 404


def test_a_long_history_backfill_is_stored_by_a_job(api, space):
    lines = [
        json.dumps({"session_id": f"h{i % 5}", "role": "user", "text": f"we planted tulip bed {i}"})
        for i in range(120)
    ]
    args = {"jsonl": "\n".join(lines), "dry_run": False}
    response = api.post(
        "/api/v1/tools/memory_ingest_history", args, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["job_id"] and answer["created"] == 0  # not stored in the request
    status = api.get(answer["status_url"]).json()
    assert status["kind"] == "import_history" and status["status"] == "done"
    assert status["done"] == status["total"] == 120
    assert status["result"]["created"] == 120
    assert Turn.objects.filter(space=space).count() == 120
    # Again: every turn is found by its derived ref, none added.
    again = api.post("/api/v1/tools/memory_ingest_history", args, content_type="application/json")
    assert api.get(again.json()["status_url"]).json()["result"]["existing"] == 120
    assert Turn.objects.filter(space=space).count() == 120


SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"


def test_no_secret_waits_in_a_job_row(api, space, django_capture_on_commit_callbacks):
    data = dump(60)
    data["nodes"][7]["description"] = f"billing uses {SECRET}"
    export = {"format": "engram.space", "version": 1, "sessions": [], "items": []}
    history_line = {"session_id": "p", "role": "user", "text": f"my key is {SECRET}"}
    # Jobs made but not yet run: what sits in the database meanwhile.
    with django_capture_on_commit_callbacks(execute=False):
        api.post("/api/v1/import/graph", data, content_type="application/json")
        api.post(
            "/api/v1/import?background=true",
            {**export, "note": SECRET},
            content_type="application/json",
        )
        api.post(
            "/api/v1/tools/memory_ingest_history",
            {"jsonl": json.dumps(history_line), "dry_run": False, "background": True},
            content_type="application/json",
        )
    rows = list(IngestJob.objects.filter(kind__startswith="import_"))
    assert len(rows) == 3
    for job in rows:
        stored = json.dumps(job.payload)
        assert SECRET not in stored, (job.kind, stored[:300])
        # Waiting (redacted), or already run and emptied.
        assert "[REDACTED:stripe_key]" in stored or (job.status == "done" and job.payload == {})
    # The history payload as stored: each line redacted, its derived ref kept.
    redacted = import_jobs._redacted(import_jobs.HISTORY, {"jsonl": json.dumps(history_line)})
    line = json.loads(redacted["jsonl"])
    assert SECRET not in redacted["jsonl"] and line["ref"].startswith("bf:")
