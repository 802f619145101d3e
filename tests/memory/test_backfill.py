"""History backfill: a zero-cost estimate first, then an idempotent,
resumable run over a JSONL file of past turns."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from memory.models import AuditEvent, IngestJob, Session, Space, Turn
from memory.services.imports import history

pytestmark = pytest.mark.django_db

LINES = [
    {
        "session_id": "a",
        "role": "user",
        "text": "My sister Maria lives in Berlin and works as a nurse.",
        "ts": "2025-03-01T10:00:00Z",
        "ref": "a-1",
    },
    {
        "session_id": "a",
        "role": "assistant",
        "text": "That sounds like a demanding job.",
        "ts": "2025-03-01T10:00:05Z",
        "ref": "a-2",
    },
    {"session_id": "a", "role": "user", "text": "ok", "ts": "2025-03-01T10:01:00Z", "ref": "a-3"},
    # No refs: derived from content, the second identical "thanks" stays a turn of its own.
    {
        "session": "b",
        "role": "user",
        "text": "I switched from Vim to VS Code last year for work.",
        "timestamp": 1740823200,
    },
    {"session": "b", "role": "user", "text": "thanks"},
    {"session": "b", "role": "user", "text": "thanks"},
    {"session": "b", "role": "user", "text": "please open chrome and the terminal now"},
]


def _write(path: Path, lines: list[dict], extra: str = "") -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n" + extra, encoding="utf-8")
    return path


def test_the_estimate_counts_without_writing(space, tmp_path, settings) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path / "log.jsonl", LINES, extra='{"role": "user"}\nnot json\n')
    est = history.estimate(space=space, path=path)
    assert (est.turns, est.sessions, est.salient, est.already_present) == (7, 2, 2, 0)
    assert est.skip_reasons == {"assistant": 1, "short": 3, "command": 1}
    assert [b.line for b in est.bad_lines] == [8, 9]
    assert "session_id" in est.bad_lines[0].error
    assert est.estimated_llm_calls == 0  # the rule-based extractor costs nothing
    assert Turn.objects.count() == 0 and Session.objects.count() == 0

    settings.ENGRAM = {
        **settings.ENGRAM,
        "LLM_PROVIDERS": [{"base_url": "http://127.0.0.1:1", "model": "m"}],
    }
    assert history.estimate(space=space, path=path).estimated_llm_calls == 4


def test_the_command_estimates_then_runs_idempotently(space, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path / "log.jsonl", LINES)
    out = io.StringIO()
    call_command(
        "backfill_history", str(path), "--space", space.name, stdout=out, stderr=io.StringIO()
    )
    text = out.getvalue()
    assert "turns: 7  sessions: 2  already stored: 0" in text and "salient: 2" in text
    assert "estimated LLM calls: 0" in text and "dry run" in text
    assert Turn.objects.count() == 0

    out = io.StringIO()
    call_command(
        "backfill_history",
        str(path),
        "--space",
        space.name,
        "--run",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert "stored 7 new turns, 0 were already there" in out.getvalue()
    assert Turn.objects.filter(space=space).count() == 7
    a1 = Turn.objects.get(space=space, session__external_id="a", ref="a-1")
    assert a1.ts.isoformat() == "2025-03-01T10:00:00+00:00"
    b_turns = Turn.objects.filter(space=space, session__external_id="b")
    assert all(t.ref.startswith("bf:") for t in b_turns)
    assert b_turns.filter(text="thanks").values("ref").distinct().count() == 2
    assert (
        IngestJob.objects.filter(space=space).count() == 7
    )  # every turn goes through the pipeline

    out = io.StringIO()
    call_command(
        "backfill_history",
        str(path),
        "--space",
        space.name,
        "--run",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert "already stored: 7" in out.getvalue()
    assert "stored 0 new turns, 7 were already there" in out.getvalue()
    assert Turn.objects.filter(space=space).count() == 7
    assert (
        AuditEvent.objects.filter(space=space, action="import", detail__kind="history").count() == 2
    )


def test_an_interrupted_run_resumes(space, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The first run stopped after three turns (a partial file stands in for
    # the kill); the rerun over the whole file stores only the rest.
    partial = _write(tmp_path / "part.jsonl", LINES[:3])
    history.run(space=space, path=partial, batch_size=2)
    assert Turn.objects.filter(space=space).count() == 3

    seen: list[int] = []
    full = _write(tmp_path / "full.jsonl", LINES)
    assert history.estimate(space=space, path=full).already_present == 3
    result = history.run(space=space, path=full, batch_size=2, progress=seen.append)
    assert (result.created, result.existing) == (4, 3)
    assert sum(seen) == 7 and seen == [2, 2, 2, 1]
    assert Turn.objects.filter(space=space).count() == 7


def test_it_refuses_a_missing_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no such file"):
        call_command("backfill_history", str(tmp_path / "nope.jsonl"), "--space", "x")
    assert not Space.objects.filter(name="x").exists()
