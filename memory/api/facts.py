"""POST /api/v1/memory/facts: the explicit fact write path (steps 3–7 of the
write pipeline, no salience gate, no LLM in the request)."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any, Literal

from django.utils import timezone
from ninja import Query, Router, Schema
from ninja.responses import Status
from pydantic import Field, field_validator

from engram_site.bounds import Instant, check_instant
from engram_site.types import SpaceRequest
from memory.errors import Invalid
from memory.models import Space
from memory.schemas import SCOPE_DESCRIPTION, Scope
from memory.selectors import facts_in_view
from memory.services import approval, scopes
from memory.services.facts import save_fact
from memory.timeview import TimeView
from memory.tools.write import ChainRow

router = Router(tags=["memory"])


class FactIn(Schema):
    text: str = Field(min_length=1, max_length=4000)
    subject: str = Field(default="", max_length=200)
    predicate: str = Field(default="", max_length=100)
    object: str = Field(default="", max_length=500)
    kind: Literal[
        "fact", "preference", "event", "instruction", "insight", "decision", "episode"
    ] = "fact"
    valid_from: str | None = Field(default=None, max_length=40)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    dry_run: bool = Field(default=False, description="Answer the plan and write nothing.")
    scope: Scope | None = Field(default=None, description=SCOPE_DESCRIPTION)

    @field_validator("text")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("valid_from")
    @classmethod
    def iso_datetime(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        _parse_when(value)
        return value


class FactOut(Schema):
    id: str | None  # None only for a dry run that would add nothing yet
    # ADD | UPDATE | NOOP | DELETE; a dry run also plans DEFER, DROP, QUARANTINE.
    action: str
    superseded: list[str]
    # Extensions beyond the stable contract:
    disposition: str  # the resolver's own word: also DEFER (kept pending review)
    status: str  # active | pending_review
    quarantined: bool
    reasons: list[str] = []  # why the injection screen quarantined it (empty if it did not)
    changed: bool  # false for NOOP: the fact was already known as it is
    dry_run: bool = False
    reason: str = ""
    space: str = ""  # the space it was written to (see `scope`)
    # With ENGRAM_WRITE_APPROVAL=all: status "proposed" (answered 202), id
    # null, `action` the plan; nothing written until a person approves.
    proposal_id: str | None = None


def _parse_when(value: str) -> datetime:
    raw = value.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(raw), time.min)
        except ValueError:
            raise ValueError("must be an ISO-8601 date or datetime") from None
    check_instant(parsed)
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.get_default_timezone())
    return parsed


def _propose(space: Space, actor: str, fields: dict[str, Any]) -> Status | dict[str, Any]:
    """ENGRAM_WRITE_APPROVAL=all: the fact is held for a person. The answer
    gives the plan approving would carry out now (a dry run), so the contract
    fields keep their meaning; a text too vague to store is refused now."""
    plan = save_fact(space=space, source="api", actor=actor, dry_run=True, judge=True, **fields)
    if plan.action == "DROP":
        raise Invalid("text: carries too little information to store as a fact")
    if plan.action == "NOOP":
        # It repeats what is stored: nothing for a person to approve.
        return {
            "id": None,
            "action": "NOOP",
            "superseded": [],
            "disposition": "NOOP",
            "status": "",
            "quarantined": False,
            "reasons": [],
            "changed": False,
            "reason": plan.reason,
            "space": space.name,
        }
    proposal = approval.propose_fact(space=space, proposer=actor, source="api", **fields)
    return Status(
        202,
        {
            "id": None,
            "action": _CONTRACT_ACTION.get(plan.action, plan.action),
            "superseded": [str(pk) for pk in plan.superseded],
            "disposition": plan.action,
            "status": "proposed",
            "proposal_id": str(proposal.pk),
            "quarantined": bool(proposal.screen_reasons),
            "reasons": list(proposal.screen_reasons),
            "changed": False,
            "reason": "waits for a person's approval in Review",
            "space": space.name,
        },
    )


# The dry run's words outside the contract's ADD | UPDATE | NOOP | DELETE.
_CONTRACT_ACTION = {"DEFER": "ADD", "QUARANTINE": "ADD"}


@router.post("/memory/facts", response={200: FactOut, 202: FactOut})
def post_fact(request: SpaceRequest, payload: FactIn) -> Any:
    space = scopes.write_space(request.space, request.user_space, payload.scope)
    actor = f"api:{request.api_key.prefix}"
    fields: dict[str, Any] = {
        "text": payload.text,
        "subject": payload.subject,
        "predicate": payload.predicate,
        "object": payload.object,
        "kind": payload.kind,
        "importance": payload.importance,
        "valid_from": _parse_when(payload.valid_from) if payload.valid_from else None,
    }
    if approval.gates_facts() and not payload.dry_run:
        return _propose(space, actor, fields)
    result = save_fact(
        space=space,
        source="api",
        actor=actor,
        dry_run=payload.dry_run,
        judge=True,  # an uncertain case goes to the write judge, as a turn's do
        **fields,
    )
    if payload.dry_run:
        return {
            "id": None,
            "action": result.action,
            "superseded": [str(pk) for pk in result.superseded],
            "disposition": result.action,
            "status": "",
            "quarantined": result.quarantined,
            "reasons": result.reasons,
            "dry_run": True,
            "changed": result.action not in ("NOOP", "DROP"),
            "reason": result.reason,
            "space": space.name,
        }
    if result.item is None:
        if result.action == "DROP":
            raise Invalid("text: carries too little information to store as a fact")
        raise Invalid(f"text: {result.reason or 'nothing to change'}")
    item = result.item
    return {
        "id": str(item.pk),
        "action": "ADD" if result.action == "DEFER" else result.action,
        "superseded": [str(pk) for pk in result.superseded],
        "disposition": result.action,
        "status": item.status,
        "quarantined": item.screen_status != "ok",
        "reasons": result.reasons
        or (list(item.screen_reasons) if item.screen_status != "ok" else []),
        "changed": result.action != "NOOP",
        "space": space.name,
    }


class FactChainQuery(Schema):
    subject: str = Field(
        default="",
        max_length=200,
        description='Whose facts: a name or alias ("user" for the user).',
    )
    predicate: str = Field(default="", max_length=100, description="e.g. lives_in, works_at.")
    as_of: Instant | None = Field(
        default=None, description="Valid time: what was true then, by what is known now."
    )
    known_at: Instant | None = Field(
        default=None, description="Transaction time: what Engram knew at that moment."
    )
    include_history: bool = Field(default=False, description="Every known value, not only current.")
    limit: int = Field(default=100, ge=1, le=500)


class FactChainOut(Schema):
    # The same row the memory_facts tool answers (FactView.as_dict).
    facts: list[ChainRow]


@router.get("/memory/facts", response=FactChainOut)
def get_facts(request: SpaceRequest, params: Query[FactChainQuery]) -> dict[str, Any]:
    """A fact chain: the facts of a subject and predicate, now or as a time view sees them."""
    view = TimeView(as_of=params.as_of, known_at=params.known_at, history=params.include_history)
    chain = facts_in_view(
        space=request.space,
        subject=params.subject,
        predicate=params.predicate,
        when=view,
        limit=params.limit,
    )
    return {"facts": [f.as_dict() for f in chain]}
