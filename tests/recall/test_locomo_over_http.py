"""eval_locomo --url: a conversation in LoCoMo's shape posted to a running
stack (gunicorn as ./run starts it, a real Celery worker), drained by that
worker, asked over POST /recall, scores as it does in-process."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memory.evaluation import locomo
from tests.integration import faults

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

FIXTURE = Path(__file__).parent / "fixtures" / "dated_conversation.json"


def _as_locomo(conv: dict[str, Any]) -> dict[str, Any]:
    """The fixture in locomo10.json's shape: session_N lists of turns with
    dia_id, session_N_date_time in its "7:00 pm on 14 January, 2024" form."""
    c: dict[str, Any] = {"speaker_a": conv["speaker_a"], "speaker_b": conv["speaker_b"]}
    for s, session in enumerate(conv["sessions"], start=1):
        at = datetime.fromisoformat(session["date"].replace("Z", "+00:00"))
        c[f"session_{s}_date_time"] = at.strftime("%-I:%M %p on %-d %B, %Y").lower()
        c[f"session_{s}"] = [
            {"speaker": speaker, "dia_id": f"D{s}:{n}", "text": text}
            for n, (speaker, text) in enumerate(session["turns"], start=1)
        ]
    qa = [{"question": q["question"], "evidence": q["evidence"], "category": 4} for q in conv["qa"]]
    return {"conversation": c, "qa": qa}


def test_a_conversation_over_the_api_scores_as_in_process(tmp_path) -> None:
    conv = _as_locomo(json.loads(FIXTURE.read_text()))
    with faults.stack(tmp_path, redis=False, beat=False) as s:
        posted = locomo.post(1, conv, url=s.base.removesuffix("/api/v1"))
        locomo.drain([posted], timeout=120)
        over_http = locomo.ask(1, conv, posted, k=5)
    in_process = locomo.ask(1, conv, locomo.ingest(2, conv), k=5)
    assert [r["found"] for r in over_http] == [r["found"] for r in in_process]
    mean = sum(r["r@5"] for r in over_http) / len(over_http)
    assert mean >= 0.9, [(r["question"], r["found"]) for r in over_http if r["r@5"] < 1]
