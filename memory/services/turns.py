"""Accepting turns: durable on return, processed in the background."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.models import IngestJob, Session, Space, Turn
from memory.screening import redact_json, screen
from memory.services import outbox


@dataclass(frozen=True)
class TurnData:
    session_id: str
    role: str
    text: str
    ts: datetime | None = None
    ref: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Accepted:
    turn: Turn
    created: bool  # False when (session_id, ref) already existed


def accept_turns(*, space: Space, turns: list[TurnData]) -> list[Accepted]:
    """Store turns and their ingest jobs in one transaction; the pipeline task
    is sent after commit. Re-posting a (session_id, ref) returns the stored
    turn and creates nothing.

    A batch is written with one lookup of the refs it names and bulk INSERTs
    of turns, then jobs: the transaction holds SQLite's single write lock, so
    the less it does, the less the workers wait. Should a concurrent request
    store one of the same refs between the lookup and the INSERT (PostgreSQL;
    SQLite's IMMEDIATE transactions exclude it), the whole batch is redone one
    turn at a time, each in a savepoint that settles such a race on its own."""
    now = timezone.now()
    try:
        with transaction.atomic():
            accepted, new_jobs = _accept_batch(space=space, turns=turns, now=now)
    except IntegrityError:
        with transaction.atomic():
            accepted, new_jobs = _accept_one_by_one(space=space, turns=turns, now=now)
    return accepted


def _sessions(*, space: Space, turns: list[TurnData], now: datetime) -> dict[str, Session]:
    sessions: dict[str, Session] = {}
    for data in turns:
        if data.session_id not in sessions:
            sessions[data.session_id], _ = Session.objects.get_or_create(
                space=space,
                external_id=data.session_id,
                defaults={"started_at": data.ts or now, "last_turn_at": data.ts or now},
            )
    return sessions


def _new_turn(*, space: Space, session: Session, data: TurnData, now: datetime) -> Turn:
    # Secrets never reach the database; instruction-like turns are kept (the
    # episode happened) but quarantined from recall.
    screened = screen(data.text)
    return Turn(
        space=space,
        session=session,
        ref=data.ref,
        role=data.role,
        text=screened.text or "[empty after screening]",
        screen_status=screened.status,
        ts=data.ts or now,
        metadata=redact_json(data.metadata),
        created_at=now,
    )


def _accept_batch(
    *, space: Space, turns: list[TurnData], now: datetime
) -> tuple[list[Accepted], list[int]]:
    sessions = _sessions(space=space, turns=turns, now=now)
    refs = {data.ref for data in turns if data.ref is not None}
    known: dict[tuple[int, str], Turn] = {}
    if refs:
        for turn in Turn.objects.filter(
            space=space, session__in=list(sessions.values()), ref__in=refs
        ):
            known[(turn.session_id, str(turn.ref))] = turn
    accepted: list[Accepted] = []
    new_turns: list[Turn] = []
    for data in turns:
        session = sessions[data.session_id]
        key = (session.pk, data.ref) if data.ref is not None else None
        if key is not None and key in known:
            # Stored before, or earlier in this same batch.
            accepted.append(Accepted(turn=known[key], created=False))
            continue
        turn = _new_turn(space=space, session=session, data=data, now=now)
        new_turns.append(turn)
        accepted.append(Accepted(turn=turn, created=True))
        if key is not None:
            known[key] = turn
    Turn.objects.bulk_create(new_turns)
    jobs = IngestJob.objects.bulk_create(
        [
            IngestJob(space=space, turn=turn, kind="turn", idempotency_key=f"turn:{turn.pk}")
            for turn in new_turns
        ]
    )
    new_jobs = [job.pk for job in jobs]
    _touch(space=space, sessions=sessions, accepted=accepted, now=now, new_jobs=new_jobs)
    return accepted, new_jobs


def _accept_one_by_one(
    *, space: Space, turns: list[TurnData], now: datetime
) -> tuple[list[Accepted], list[int]]:
    sessions = _sessions(space=space, turns=turns, now=now)
    accepted: list[Accepted] = []
    new_jobs: list[int] = []
    for data in turns:
        session = sessions[data.session_id]
        existing = None
        if data.ref is not None:
            existing = Turn.objects.filter(space=space, session=session, ref=data.ref).first()
        if existing is not None:
            accepted.append(Accepted(turn=existing, created=False))
            continue
        turn = _new_turn(space=space, session=session, data=data, now=now)
        try:
            with transaction.atomic():
                turn.save(force_insert=True)
        except IntegrityError:
            # A concurrent request stored the same (session, ref) first.
            turn = Turn.objects.get(space=space, session=session, ref=data.ref)
            accepted.append(Accepted(turn=turn, created=False))
            continue
        job = IngestJob.objects.create(
            space=space, turn=turn, kind="turn", idempotency_key=f"turn:{turn.pk}"
        )
        new_jobs.append(job.pk)
        accepted.append(Accepted(turn=turn, created=True))
    _touch(space=space, sessions=sessions, accepted=accepted, now=now, new_jobs=new_jobs)
    return accepted, new_jobs


def _touch(
    *,
    space: Space,
    sessions: dict[str, Session],
    accepted: list[Accepted],
    now: datetime,
    new_jobs: list[int],
) -> None:
    for session in sessions.values():
        latest = max((a.turn.ts for a in accepted if a.turn.session_id == session.pk), default=None)
        if latest and latest > session.last_turn_at:
            Session.objects.filter(pk=session.pk).update(last_turn_at=latest)
    Space.objects.filter(pk=space.pk).update(last_activity_at=now)
    if new_jobs:
        outbox.enqueue_on_commit(new_jobs)
