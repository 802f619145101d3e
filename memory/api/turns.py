from __future__ import annotations

from ninja import Router
from ninja.responses import Status

from engram_site.types import SpaceRequest
from memory.schemas import TurnBatchIn, TurnBatchOut, TurnIn, TurnOut
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


def _reasons(request: SpaceRequest, accepted: list[Accepted]) -> list[list[str]]:
    """Why each accepted turn is quarantined: from this screening, or for a
    turn posted before (same ref), from the audit log."""
    old = stored_reasons(
        space=request.space, turns=[a.turn for a in accepted if a.quarantined and not a.reasons]
    )
    return [list(a.reasons) or old.get(a.turn.pk, []) for a in accepted]


@router.post("/turns", response={202: TurnOut})
def post_turn(request: SpaceRequest, payload: TurnIn) -> Status:
    accepted = accept_turns(space=request.space, turns=[_data(payload)])
    [reasons] = _reasons(request, accepted)
    return Status(
        202,
        {
            "id": str(accepted[0].turn.pk),
            "session_id": payload.session_id,
            "ref": accepted[0].turn.ref,
            "queued": accepted[0].created,
            "quarantined": accepted[0].quarantined,
            "reasons": reasons,
        },
    )


@router.post("/turns/batch", response={202: TurnBatchOut})
def post_turns(request: SpaceRequest, payload: TurnBatchIn) -> Status:
    accepted = accept_turns(space=request.space, turns=[_data(t) for t in payload.turns])
    reasons = _reasons(request, accepted)
    return Status(
        202,
        {
            "ids": [str(a.turn.pk) for a in accepted],
            "queued": sum(a.created for a in accepted),
            "quarantined": [
                {"index": i, "id": str(a.turn.pk), "reasons": reasons[i]}
                for i, a in enumerate(accepted)
                if a.quarantined
            ],
        },
    )
