from __future__ import annotations

from ninja import Router
from ninja.responses import Status

from engram_site.types import SpaceRequest
from memory.models import Space
from memory.schemas import TurnBatchIn, TurnBatchOut, TurnIn, TurnOut
from memory.services import scopes
from memory.services.turns import Accepted, TurnData, accept_turns, stored_reasons

router = Router(tags=["turns"])


def _data(turn: TurnIn) -> TurnData:
    return TurnData(
        session_id=turn.session_id,
        role=turn.role,
        text=turn.text,
        ts=turn.ts,
        ref=turn.ref,
        metadata=turn.metadata,
    )


def _accept(request: SpaceRequest, space: Space, turns: list[TurnIn]) -> list[Accepted]:
    # A turn written to the key's own space carries the link, so the worker
    # can route what is personal in it to the user space; one written to the
    # user space is already where its facts belong.
    linked = request.user_space if space.pk == request.space.pk else None
    return accept_turns(space=space, turns=[_data(t) for t in turns], user_space=linked)


def _reasons(space: Space, accepted: list[Accepted]) -> list[list[str]]:
    """Why each accepted turn is quarantined: from this screening, or for a
    turn posted before (same ref), from the audit log."""
    old = stored_reasons(
        space=space, turns=[a.turn for a in accepted if a.quarantined and not a.reasons]
    )
    return [list(a.reasons) or old.get(a.turn.pk, []) for a in accepted]


@router.post("/turns", response={202: TurnOut})
def post_turn(request: SpaceRequest, payload: TurnIn) -> Status:
    space = scopes.write_space(request.space, request.user_space, payload.scope)
    accepted = _accept(request, space, [payload])
    [reasons] = _reasons(space, accepted)
    return Status(
        202,
        {
            "id": str(accepted[0].turn.pk),
            "session_id": payload.session_id,
            "ref": accepted[0].turn.ref,
            "queued": accepted[0].created,
            "quarantined": accepted[0].quarantined,
            "reasons": reasons,
            "space": space.name,
        },
    )


@router.post("/turns/batch", response={202: TurnBatchOut})
def post_turns(request: SpaceRequest, payload: TurnBatchIn) -> Status:
    # Turns are grouped by the space their scope names (a batch is usually
    # all one scope: one group, one transaction); answers keep batch order.
    groups: dict[int, tuple[Space, list[int]]] = {}
    for index, turn in enumerate(payload.turns):
        space = scopes.write_space(request.space, request.user_space, turn.scope or payload.scope)
        groups.setdefault(space.pk, (space, []))[1].append(index)
    accepted: list[Accepted | None] = [None] * len(payload.turns)
    reasons: list[list[str]] = [[] for _ in payload.turns]
    for space, indexes in groups.values():
        done = _accept(request, space, [payload.turns[i] for i in indexes])
        for i, a, why in zip(indexes, done, _reasons(space, done), strict=True):
            accepted[i], reasons[i] = a, why
    answered = [a for a in accepted if a is not None]
    return Status(
        202,
        {
            "ids": [str(a.turn.pk) for a in answered],
            "queued": sum(a.created for a in answered),
            "quarantined": [
                {"index": i, "id": str(a.turn.pk), "reasons": reasons[i]}
                for i, a in enumerate(answered)
                if a.quarantined
            ],
        },
    )
