"""Accepting turns: durable on return, processed in the background."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.models import AuditEvent, IngestJob, MemoryItem, Session, Space, Turn
from memory.screening import redact_json, screen, split_reasons
from memory.services import audit, outbox


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
    # Why the turn is quarantined (empty when it is not).
    reasons: list[str] = field(default_factory=list)

    @property
    def quarantined(self) -> bool:
        return self.turn.screen_status == "flagged"


def accept_turns(
    *, space: Space, turns: list[TurnData], user_space: Space | None = None
) -> list[Accepted]:
    """Store turns and their ingest jobs in one transaction; the pipeline task
    is sent after commit. Re-posting a (session_id, ref) returns the stored
    turn and creates nothing.

    A batch is written with one lookup of the refs it names and bulk INSERTs
    of turns, then jobs: the transaction holds SQLite's single write lock, so
    the less it does, the less the workers wait. Should a concurrent request
    store one of the same refs between the lookup and the INSERT (PostgreSQL;
    SQLite's IMMEDIATE transactions exclude it), the whole batch is redone one
    turn at a time, each in a savepoint that settles such a race on its own.

    `user_space`: the user space the posting key is linked to. Its id goes
    on each job, so the worker routes the personal facts it extracts there
    (pipeline.routing); the job knows only the turn's space otherwise."""
    payload = {"user_space": user_space.pk} if user_space and user_space.pk != space.pk else {}
    now = timezone.now()
    screens = _Screens(space, turns)
    try:
        with transaction.atomic():
            accepted, new_jobs = _accept_batch(
                space=space, turns=turns, now=now, screens=screens, payload=payload
            )
    except IntegrityError:
        with transaction.atomic():
            accepted, new_jobs = _accept_one_by_one(
                space=space, turns=turns, now=now, screens=screens, payload=payload
            )
    return accepted


class _Screens:
    """The screening of a batch, worked out before its transaction opens.

    Screening is most of the cost of accepting a turn; done inside the
    transaction it would hold SQLite's one write lock all along, and every
    worker would stand still while a batch is posted. The split check reads
    the latest stored turn of each session and role here, outside the lock;
    should another request store a newer one meanwhile, the pair is simply
    screened again inside (`split`)."""

    def __init__(self, space: Space, turns: list[TurnData]) -> None:
        self.turn = [screen(data.text) for data in turns]
        self.metadata = [redact_json(data.metadata) for data in turns]
        self._split: dict[tuple[str, str], list[str]] = {}
        last: dict[tuple[str, str], str | None] = {}
        for data, screened in zip(turns, self.turn, strict=True):
            key = (data.session_id, data.role)
            if key not in last:
                stored = (
                    Turn.objects.filter(space=space, session__external_id=data.session_id)
                    .filter(role=data.role)
                    .order_by("-ts", "-id")
                    .values_list("text", "screen_status")
                    .first()
                )
                last[key] = stored[0] if stored and stored[1] == "ok" else None
            previous = last[key]
            text = screened.text or EMPTY_TEXT
            if not screened.flagged and previous is not None:
                self.split(previous, text)
            last[key] = None if screened.flagged else text

    def split(self, previous: str, text: str) -> list[str]:
        key = (previous, text)
        if key not in self._split:
            self._split[key] = split_reasons(previous, text)
        return self._split[key]


EMPTY_TEXT = "[empty after screening]"


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


def _new_turn(
    *,
    space: Space,
    session: Session,
    data: TurnData,
    index: int,
    now: datetime,
    before: _Before,
    screens: _Screens,
) -> tuple[Turn, list[str]]:
    # Secrets never reach the database; instruction-like turns are kept (the
    # episode happened) but quarantined from recall.
    screened = screens.turn[index]
    reasons = [r for r in screened.reasons if screened.flagged]
    turn = Turn(
        space=space,
        session=session,
        ref=data.ref,
        role=data.role,
        text=screened.text or EMPTY_TEXT,
        screen_status=screened.status,
        ts=data.ts or now,
        metadata=screens.metadata[index],
        created_at=now,
    )
    previous = before.get(session, data.role)
    if not screened.flagged and previous is not None and previous.screen_status == "ok":
        # An attack cut in two: this turn read with the end of the one before
        # it (same session, same role) quarantines both.
        reasons = screens.split(previous.text, turn.text)
        if reasons:
            turn.screen_status = "flagged"
            previous.screen_status = "flagged"
            if previous.pk is None:  # earlier in this batch, not inserted yet
                before.reasons[id(previous)].extend(reasons)
            else:
                before.split.append((previous, reasons))
    before.last[(session.pk, data.role)] = turn
    before.reasons[id(turn)] = reasons
    return turn, reasons


class _Before:
    """The latest turn of each (session, role) as the accepted turns go by:
    the one stored before this request, then each new one in turn."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self.last: dict[tuple[int, str], Turn | None] = {}
        self.split: list[tuple[Turn, list[str]]] = []  # stored first halves to quarantine
        self.reasons: dict[int, list[str]] = {}  # by id() of each new turn

    def get(self, session: Session, role: str) -> Turn | None:
        key = (session.pk, role)
        if key not in self.last:
            self.last[key] = (
                Turn.objects.filter(space=self.space, session=session, role=role)
                .only("id", "text", "screen_status", "session_id", "role", "created_at")
                .order_by("-ts", "-id")
                .first()
            )
        return self.last[key]


def _quarantine(*, space: Space, accepted: list[Accepted], before: _Before) -> None:
    """Record why each new turn was quarantined, and quarantine the stored
    first halves of split attacks with the facts made of them (a half said
    earlier in the same batch was flagged before it was inserted)."""
    events = [
        audit.event(
            space=space,
            action="quarantine",
            target_type="turn",
            target_id=a.turn.pk,
            actor="screening",
            detail={"reasons": a.reasons},
        )
        for a in accepted
        if a.created and a.reasons
    ]
    for previous, reasons in before.split:
        Turn.objects.filter(pk=previous.pk).update(screen_status="flagged")
        # Facts made from that half (not older ones it merely confirmed).
        MemoryItem.objects.filter(
            space=space, stated_in__turn_id=previous.pk, created_at__gte=previous.created_at
        ).update(screen_status=MemoryItem.Screen.FLAGGED, screen_reasons=reasons)
        events.append(
            audit.event(
                space=space,
                action="quarantine",
                target_type="turn",
                target_id=previous.pk,
                actor="screening",
                detail={"reasons": reasons},
            )
        )
    AuditEvent.objects.bulk_create(events)


def stored_reasons(*, space: Space, turns: list[Turn]) -> dict[int, list[str]]:
    """Why each of these stored turns was quarantined, from the audit log."""
    ids = [str(t.pk) for t in turns if t.screen_status == "flagged"]
    found: dict[int, list[str]] = {}
    if ids:
        for event in AuditEvent.objects.filter(
            space=space, action="quarantine", target_type="turn", target_id__in=ids
        ).order_by("created_at", "id"):
            found[int(event.target_id)] = list(event.detail.get("reasons") or [])
    return found


def _accept_batch(
    *,
    space: Space,
    turns: list[TurnData],
    now: datetime,
    screens: _Screens,
    payload: dict[str, Any],
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
    before = _Before(space)
    for index, data in enumerate(turns):
        session = sessions[data.session_id]
        key = (session.pk, data.ref) if data.ref is not None else None
        if key is not None and key in known:
            # Stored before, or earlier in this same batch.
            accepted.append(Accepted(turn=known[key], created=False))
            continue
        turn, reasons = _new_turn(
            space=space,
            session=session,
            data=data,
            index=index,
            now=now,
            before=before,
            screens=screens,
        )
        new_turns.append(turn)
        accepted.append(Accepted(turn=turn, created=True, reasons=reasons))
        if key is not None:
            known[key] = turn
    Turn.objects.bulk_create(new_turns)
    _quarantine(space=space, accepted=accepted, before=before)
    jobs = IngestJob.objects.bulk_create(
        [
            IngestJob(
                space=space,
                turn=turn,
                kind="turn",
                idempotency_key=f"turn:{turn.pk}",
                payload=payload,
            )
            for turn in new_turns
        ]
    )
    new_jobs = [job.pk for job in jobs]
    _touch(space=space, sessions=sessions, accepted=accepted, now=now, new_jobs=new_jobs)
    return accepted, new_jobs


def _accept_one_by_one(
    *,
    space: Space,
    turns: list[TurnData],
    now: datetime,
    screens: _Screens,
    payload: dict[str, Any],
) -> tuple[list[Accepted], list[int]]:
    sessions = _sessions(space=space, turns=turns, now=now)
    accepted: list[Accepted] = []
    new_jobs: list[int] = []
    before = _Before(space)
    for index, data in enumerate(turns):
        session = sessions[data.session_id]
        existing = None
        if data.ref is not None:
            existing = Turn.objects.filter(space=space, session=session, ref=data.ref).first()
        if existing is not None:
            accepted.append(Accepted(turn=existing, created=False))
            continue
        turn, reasons = _new_turn(
            space=space,
            session=session,
            data=data,
            index=index,
            now=now,
            before=before,
            screens=screens,
        )
        try:
            with transaction.atomic():
                turn.save(force_insert=True)
        except IntegrityError:
            # A concurrent request stored the same (session, ref) first.
            turn = Turn.objects.get(space=space, session=session, ref=data.ref)
            accepted.append(Accepted(turn=turn, created=False))
            continue
        job = IngestJob.objects.create(
            space=space,
            turn=turn,
            kind="turn",
            idempotency_key=f"turn:{turn.pk}",
            payload=payload,
        )
        new_jobs.append(job.pk)
        accepted.append(Accepted(turn=turn, created=True, reasons=reasons))
    _quarantine(space=space, accepted=accepted, before=before)
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
