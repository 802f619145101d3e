"""Accepting turns: durable on return, processed in the background."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.models import IngestJob, Session, Space, Turn
from memory.screening import screen
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
    turn and creates nothing."""
    now = timezone.now()
    accepted: list[Accepted] = []
    new_jobs: list[int] = []
    with transaction.atomic():
        sessions: dict[str, Session] = {}
        for data in turns:
            session = sessions.get(data.session_id)
            if session is None:
                session, _ = Session.objects.get_or_create(
                    space=space,
                    external_id=data.session_id,
                    defaults={"started_at": data.ts or now, "last_turn_at": data.ts or now},
                )
                sessions[data.session_id] = session
            existing = None
            if data.ref is not None:
                existing = Turn.objects.filter(space=space, session=session, ref=data.ref).first()
            if existing is not None:
                accepted.append(Accepted(turn=existing, created=False))
                continue
            # Secrets never reach the database; instruction-like turns are kept
            # (the episode happened) but quarantined from recall.
            screened = screen(data.text)
            try:
                with transaction.atomic():
                    turn = Turn.objects.create(
                        space=space,
                        session=session,
                        ref=data.ref,
                        role=data.role,
                        text=screened.text or "[empty after screening]",
                        screen_status=screened.status,
                        ts=data.ts or now,
                        metadata=data.metadata,
                        created_at=now,
                    )
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
        for session in sessions.values():
            latest = max(
                (a.turn.ts for a in accepted if a.turn.session_id == session.pk), default=None
            )
            if latest and latest > session.last_turn_at:
                Session.objects.filter(pk=session.pk).update(last_turn_at=latest)
        Space.objects.filter(pk=space.pk).update(last_activity_at=now)
        if new_jobs:
            outbox.enqueue_on_commit(new_jobs)
    return accepted
