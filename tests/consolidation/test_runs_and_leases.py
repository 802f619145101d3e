"""Runs never overlap, a killed run is taken over and finished, and the API
exposes runs per space only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from consolidation import schedule, services
from consolidation.models import ConsolidationRun
from memory.models import SessionSummary, Space
from memory.services.spaces import create_api_key
from tests.consolidation.messy import post_sessions

pytestmark = pytest.mark.django_db


def test_it_keeps_one_active_run_per_space(space):  # type: ignore[no-untyped-def]
    first, created = services.start_run(space=space, trigger="manual", enqueue=False)
    again, created_again = services.start_run(space=space, trigger="idle", enqueue=False)
    assert created and not created_again and again.pk == first.pk
    assert services.claim(first.pk) is not None
    assert services.claim(first.pk) is None  # the lease is held


def test_it_takes_over_a_killed_run_and_finishes_the_job(space, api):  # type: ignore[no-untyped-def]
    post_sessions(api, timezone.now())
    run, _ = services.start_run(space=space, trigger="manual", enqueue=False)
    claimed = services.claim(run.pk)
    assert claimed is not None
    # The worker dies after the first step: its progress is on the row, its lease runs out.
    SessionSummary.objects.create(
        space=space, session=space.sessions.first(), text="x", turn_count=3
    )
    ConsolidationRun.objects.filter(pk=run.pk).update(
        steps={"summarize": {"status": "done", "counts": {"summarized": 1}}},
        lease_until=timezone.now() - timedelta(seconds=1),
    )
    finished = services.execute(run.pk)
    assert finished is not None and finished.status == "done"
    assert finished.steps["summarize"]["counts"] == {"summarized": 1}  # not redone
    assert finished.steps["promote"]["status"] == "done"
    # The next run summarizes what the killed one never reached.
    nxt = services.run_now(space=space)
    assert nxt is not None and nxt.steps["summarize"]["counts"]["summarized"] == 2
    assert SessionSummary.objects.filter(space=space).count() == 3


def test_a_worker_that_lost_its_lease_stops(space):  # type: ignore[no-untyped-def]
    run, _ = services.start_run(space=space, trigger="manual", enqueue=False)
    _, token = services.claim(run.pk)  # type: ignore[misc]
    ConsolidationRun.objects.filter(pk=run.pk).update(
        lease_until=timezone.now() - timedelta(seconds=1)
    )
    assert services.claim(run.pk) is not None  # taken over
    with pytest.raises(services.LeaseLost):
        services._save(run.pk, token, steps={"summarize": {"status": "done"}})


def test_idle_check_starts_runs_only_for_quiet_spaces_with_news(space, settings):  # type: ignore[no-untyped-def]
    busy = Space.objects.create(name="busy", last_activity_at=timezone.now())
    idle_for = settings.ENGRAM["CONSOLIDATE_IDLE_MINUTES"] + 1
    Space.objects.filter(pk=space.pk).update(
        last_activity_at=timezone.now() - timedelta(minutes=idle_for)
    )
    assert [s.pk for s in schedule.idle_spaces()] == [space.pk]
    run = services.run_now(space=space, trigger="idle")
    assert run is not None
    assert schedule.idle_spaces() == []  # nothing new since the run started
    Space.objects.filter(pk=space.pk).update(
        last_activity_at=timezone.now() - timedelta(minutes=idle_for) + timedelta(seconds=30)
    )
    ConsolidationRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(days=1))
    Space.objects.filter(pk=space.pk).update(
        last_consolidated_at=timezone.now() - timedelta(days=1)
    )
    assert [s.pk for s in schedule.idle_spaces()] == [space.pk]
    assert busy.pk not in {s.pk for s in schedule.idle_spaces()}


def test_the_api_starts_lists_and_reads_runs(
    space, api, client_for, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            "/api/v1/consolidate", {"skip": ["environment"]}, content_type="application/json"
        )
    assert r.status_code == 202
    run_id = r.json()["run_id"]
    listed = api.get("/api/v1/consolidation/runs").json()
    assert listed["count"] == 1 and listed["runs"][0]["id"] == run_id
    run = api.get(f"/api/v1/consolidation/runs/{run_id}").json()
    assert run["status"] == "done" and run["steps"]["environment"] == {"status": "skipped"}
    assert run["duration_seconds"] is not None and run["report"]

    r = api.post("/api/v1/consolidate", {"steps": ["dream"]}, content_type="application/json")
    assert r.status_code == 422 and "dream" in r.json()["detail"]
    r = api.get("/api/v1/consolidation/runs?limit=0")
    assert r.status_code == 422
    _, other_key = create_api_key(space_name="elsewhere")
    other = client_for(other_key)
    assert other.get(f"/api/v1/consolidation/runs/{run_id}").status_code == 404
    assert other.get("/api/v1/consolidation/runs").json()["count"] == 0
