"""History backfill: past conversation logs (JSONL, one turn a line) go
through the same door as live turns, `accept_turns`, so they are stored,
screened and extracted exactly like new ones.

Every turn needs a stable (session, ref) so a rerun finds what an earlier,
perhaps interrupted, run stored: a line's own `ref` is used when it has one,
else one is derived from its content. First `estimate` (no writes, no LLM
calls), then `run`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from engram_site.bounds import instant_problem
from memory.models import Session, Space, Turn
from memory.screening import screen
from memory.services import audit
from memory.services.pipeline.salience import skip_reason
from memory.services.turns import TurnData, accept_turns

MAX_TEXT = 64_000
# Extraction plus resolution: the two LLM calls a salient turn costs when a
# provider is configured (none with the rule-based extractor).
LLM_CALLS_PER_SALIENT_TURN = 2


@dataclass(frozen=True)
class BadLine:
    line: int
    error: str


@dataclass
class Estimate:
    turns: int = 0
    sessions: int = 0
    salient: int = 0
    already_present: int = 0
    estimated_llm_calls: int = 0
    llm_budget_per_hour: int = 0
    skip_reasons: Counter[str] = field(default_factory=Counter)
    bad_lines: list[BadLine] = field(default_factory=list)


@dataclass
class Result:
    created: int = 0
    existing: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)


def _ts(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    parsed: datetime | None
    if isinstance(value, int | float):
        try:
            parsed = datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"ts: epoch seconds out of range: {value!r}") from None
    else:
        try:
            parsed = parse_datetime(str(value))
        except ValueError:  # well formed but impossible, e.g. month 13
            parsed = None
    if parsed is None:
        raise ValueError(f"ts: not an ISO-8601 datetime or epoch seconds: {value!r}")
    problem = instant_problem(parsed)
    if problem is not None:
        raise ValueError(f"ts: {problem}")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


def _parse(raw: dict[str, Any], seen: Counter[str]) -> TurnData:
    session_id = str(raw.get("session_id") or raw.get("session") or "").strip()
    if not session_id or len(session_id) > 200:
        raise ValueError("session_id: required, at most 200 characters")
    role = raw.get("role")
    if role not in Turn.Role.values:
        raise ValueError("role: must be user or assistant")
    text = raw.get("text", raw.get("content"))
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        raise ValueError(f"text: required, 1 to {MAX_TEXT} characters")
    ts = _ts(raw.get("ts", raw.get("timestamp")))
    ref = raw.get("ref", raw.get("turn"))
    if ref is not None:
        ref = str(ref)
        if not ref or len(ref) > 200:
            raise ValueError("ref: 1 to 200 characters")
    else:
        base = "\x1f".join([session_id, ts.isoformat() if ts else "", role, text])
        # The n-th identical line of a session is a different turn ("ok", "ok").
        seen[base] += 1
        ref = "bf:" + hashlib.sha256(f"{base}\x1f{seen[base]}".encode()).hexdigest()[:24]
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("metadata: must be an object")
    # Marked so the pipeline knows these facts are history, not news (they
    # are slotted in the palace but never enrolled for review).
    metadata = {**metadata, "backfill": True}
    return TurnData(session_id=session_id, role=role, text=text, ts=ts, ref=ref, metadata=metadata)


# For import jobs, which fix each line's ref before storing it redacted.
parse_line = _parse


def read_turns(path: Path, bad: list[BadLine]) -> Iterator[TurnData]:
    """The turns of a JSONL file in order; unreadable lines land in `bad`."""
    seen: Counter[str] = Counter()
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                if not isinstance(raw, dict):
                    raise ValueError("a line must be a JSON object")
                yield _parse(raw, seen)
            except (ValueError, json.JSONDecodeError) as exc:
                bad.append(BadLine(line=n, error=str(exc)))


def _present(space: Space, session_ids: set[str]) -> set[tuple[str, str]]:
    rows = Turn.objects.filter(
        space=space, session__external_id__in=session_ids, ref__isnull=False
    ).values_list("session__external_id", "ref")
    return {(s, r) for s, r in rows if r is not None}


def estimate(*, space: Space, path: Path) -> Estimate:
    """What a run would do, at zero cost: no writes and no LLM calls."""
    est = Estimate(llm_budget_per_hour=settings.ENGRAM["LLM_BUDGET_PER_HOUR"])
    turns = list(read_turns(path, est.bad_lines))
    sessions = {t.session_id for t in turns}
    present = _present(space, sessions)
    est.turns, est.sessions = len(turns), len(sessions)
    for t in turns:
        if (t.session_id, t.ref) in present:
            est.already_present += 1
            continue
        probe = Turn(role=t.role, text=t.text, screen_status=screen(t.text).status)
        reason = skip_reason(probe)
        if reason:
            est.skip_reasons[reason] += 1
        else:
            est.salient += 1
    if settings.ENGRAM["LLM_PROVIDERS"]:
        est.estimated_llm_calls = est.salient * LLM_CALLS_PER_SALIENT_TURN
    return est


def run(
    *,
    space: Space,
    path: Path,
    batch_size: int = 200,
    progress: Callable[[int], None] | None = None,
    actor: str = "backfill",
    start: int = 0,
    result: Result | None = None,
) -> Result:
    """Store every turn of the file that is not stored yet, in batches that
    each commit, so an interrupted run resumes where it stopped. `start`
    skips the first turns (a paused job's committed chunks), and `result`
    carries on the counts of the run before the pause."""
    result = result if result is not None else Result()
    batch: list[TurnData] = []

    def flush() -> None:
        if not batch:
            return
        for accepted in accept_turns(space=space, turns=batch):
            if accepted.created:
                result.created += 1
            else:
                result.existing += 1
        if progress is not None:
            progress(len(batch))
        batch.clear()

    for index, turn in enumerate(read_turns(path, result.bad_lines)):
        if index < start:
            continue
        batch.append(turn)
        if len(batch) >= batch_size:
            flush()
    flush()
    audit.record(
        space=space,
        action="import",
        target_type="space",
        target_id=space.pk,
        actor=actor,
        kind="history",
        file=path.name[:200],
        created=result.created,
        existing=result.existing,
        bad_lines=len(result.bad_lines),
        sessions=Session.objects.filter(space=space).count(),
    )
    return result
