from __future__ import annotations

from ninja import Router
from ninja.responses import Status

from engram_site.types import SpaceRequest
from memory.schemas import TurnBatchIn, TurnBatchOut, TurnIn, TurnOut
from memory.services.turns import TurnData, accept_turns

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


@router.post("/turns", response={202: TurnOut})
def post_turn(request: SpaceRequest, payload: TurnIn) -> Status:
    [accepted] = accept_turns(space=request.space, turns=[_data(payload)])
    return Status(
        202,
        {
            "id": str(accepted.turn.pk),
            "session_id": payload.session_id,
            "ref": accepted.turn.ref,
            "queued": accepted.created,
        },
    )


@router.post("/turns/batch", response={202: TurnBatchOut})
def post_turns(request: SpaceRequest, payload: TurnBatchIn) -> Status:
    accepted = accept_turns(space=request.space, turns=[_data(t) for t in payload.turns])
    return Status(
        202,
        {"ids": [str(a.turn.pk) for a in accepted], "queued": sum(a.created for a in accepted)},
    )
