"""The agent tool surface over HTTP: memory_save, memory_forget, memory_report, the legacy
aliases (remember_fact, recall_facts, search_conversations, recall_sessions)
as their original REST paths. The tool registry (memory/tools) declares the
same tools for POST /tools/{name}, the GET /tools manifests and MCP; both
call the same services. memory_search itself is the recall API's
POST /memory/search."""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from datetime import datetime
from typing import Any, Literal

from ninja import Router, Schema
from ninja.responses import Status
from pydantic import Field

from engram_site.bounds import INT64_MAX, Instant
from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory.errors import Invalid
from memory.models import ProposedWrite, Space
from memory.schemas import SCOPE_DESCRIPTION, ResultOut, Scope
from memory.services import approval, core, forget, scopes, skill_usage

router = Router(tags=["agent tools"])

# Agents read this; English, like every other tool message.
PROPOSED_MESSAGE = "Proposed (#%s): nothing changes until a person approves it in Review."


# --- parameters (also the manifest's JSON schemas) ---------------------------------------


class MemorySaveIn(Schema):
    """Curate always-in-context core memory, or save a long-term fact."""

    block: Literal["user", "agent", "auto"] = Field(
        description=(
            "user: who the user is, preferences, people, standing instructions. "
            "agent: environment quirks, conventions, lessons learned. "
            "auto: save a long-term fact instead of editing a core block."
        )
    )
    action: Literal["add", "replace", "remove"] = Field(
        default="add",
        description="add a new entry; replace or remove the one entry containing old_text.",
    )
    text: str = Field(
        default="",
        max_length=2000,
        description="The entry: one dense line. Required for add and replace.",
    )
    old_text: str = Field(
        default="",
        max_length=2000,
        description="For replace/remove: a unique part of the existing entry.",
    )
    scope: Scope | None = Field(default=None, description=SCOPE_DESCRIPTION)


class MemorySaveOut(Schema):
    ok: bool
    block: str
    usage: float
    message: str
    version: int | None = None
    tokens: int | None = None
    budget_tokens: int | None = None
    demoted: list[str] = Field(default_factory=list)
    id: str | None = None
    action: str | None = None
    superseded: list[str] = Field(default_factory=list)
    # False when the save left memory as it was (the entry or fact was
    # already there): still 200, since the request was valid and its intent
    # holds. Every save endpoint answers this way.
    changed: bool = False
    # The fact was stored quarantined (never recalled), or the core entry
    # refused, by the injection screen; `reasons` says why.
    quarantined: bool = False
    reasons: list[str] = Field(default_factory=list)
    # With ENGRAM_WRITE_APPROVAL: "proposed" (answered 202), nothing written
    # until a person approves proposal_id.
    status: str | None = None
    proposal_id: str | None = None


class MemoryForgetIn(Schema):
    """Forget memories: by id, by query, or everything in this space."""

    item_id: str | None = Field(
        default=None, max_length=40, description="Id of one memory item (from a search result)."
    )
    query: str | None = Field(
        default=None,
        max_length=1000,
        description="Forget the facts that contain every word of this query.",
    )
    everything: bool = Field(
        default=False, description="Wipe all memory of this space; needs confirm."
    )
    confirm: str | None = Field(
        default=None, max_length=64, description="The space name, typed, to confirm everything."
    )
    hard: bool = Field(
        default=False,
        description="Delete for good instead of the default restorable invalidation.",
    )


class ForgetCheckOut(Schema):
    place: str = Field(
        description="table | fts | query | vectors | cache | mirror | files | database_file"
    )
    name: str
    found: int = Field(description="What is still there after the forget; 0 when clean.")


class ForgetVerificationOut(Schema):
    """Where a hard forget or a wipe looked for what it removed, and what it found."""

    verified: bool
    found: int
    checked: list[ForgetCheckOut]
    not_checked: list[str]
    storage: dict[str, Any] = Field(
        description="What was done to the database files (checkpoint, VACUUM, index merge)."
    )


class MemoryForgetOut(Schema):
    forgotten: int
    verification: ForgetVerificationOut | None = Field(
        default=None, description="Only for hard forgets and wipes."
    )
    # ENGRAM_WRITE_APPROVAL=all: held for a person (202), nothing forgotten yet.
    status: str | None = None
    proposal_id: str | None = None


class MemorySearchIn(Schema):
    """Search long-term memory: facts, past conversations, session summaries."""

    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    k: int = Field(default=8, ge=1, le=100, description="How many results.")
    as_of: Instant | None = Field(
        default=None,
        description="ISO date-time, valid time: what was true at that moment, by what is known now.",
    )
    known_at: Instant | None = Field(
        default=None, description="ISO date-time, transaction time: what Engram knew then."
    )
    include_history: bool = Field(
        default=False, description="Also superseded and expired facts (marked current: false)."
    )
    types: list[Literal["fact", "turn", "summary", "insight", "skill", "doc"]] | None = Field(
        default=None, description="Only these result types."
    )


class MemoryReportIn(Schema):
    """Report that a skill recall returned was used, so it counts as used."""

    skill_id: int = Field(
        ge=1, le=INT64_MAX, description="The id of the skill (a recall result of type skill)."
    )
    note: str = Field(default="", max_length=500, description="Optional: how it went.")


class MemoryReportOut(Schema):
    skill_id: int
    usage_count: int
    last_used_at: datetime | None


class RememberFactIn(Schema):
    """Save one long-term fact (legacy alias of memory_save with block=auto)."""

    text: str = Field(min_length=1, max_length=2000, description="The fact as one sentence.")
    subject: str = Field(default="", max_length=200)
    predicate: str = Field(default="", max_length=100)
    object: str = Field(default="", max_length=500)
    kind: Literal["fact", "preference", "event", "instruction", "decision", "episode"] = "fact"
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    scope: Scope | None = Field(default=None, description=SCOPE_DESCRIPTION)


class RememberFactOut(Schema):
    id: str | None
    action: str
    superseded: list[str] = Field(default_factory=list)
    # Stored quarantined by the injection screen (never recalled), and why.
    quarantined: bool = False
    reasons: list[str] = Field(default_factory=list)
    status: str | None = None  # "proposed" (202) when held for approval
    proposal_id: str | None = None


class RecallAliasIn(Schema):
    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    k: int = Field(default=8, ge=1, le=100, description="How many results.")
    as_of: Instant | None = Field(
        default=None,
        description="ISO date-time, valid time: what was true at that moment, by what is known now.",
    )
    known_at: Instant | None = Field(
        default=None, description="ISO date-time, transaction time: what Engram knew then."
    )


class RecallAliasOut(Schema):
    results: list[ResultOut]
    took_ms: float


# --- helpers ----------------------------------------------------------------------------


def _space(request: SpaceRequest) -> Space:
    return request.space


def _actor(request: SpaceRequest) -> str:
    return f"api:{request.api_key.prefix}"


def _field(outcome: Any, name: str, default: Any = None) -> Any:
    if isinstance(outcome, dict):
        return outcome.get(name, default)
    return getattr(outcome, name, default)


def _ids(values: Any) -> list[str]:
    return [str(getattr(v, "pk", v)) for v in (values or [])]


def save_fact(*, space: Space, source: str, **fields: Any) -> dict[str, Any]:
    """Write one fact through the write pipeline's resolution step."""
    from memory.services import facts

    outcome = facts.save_fact(space=space, source=source, judge=True, **fields)
    item = _field(outcome, "item")
    item_id = _field(outcome, "id", getattr(item, "pk", None))
    return {
        "id": str(item_id) if item_id is not None else None,
        "action": str(_field(outcome, "action", "ADD")),
        "superseded": _ids(_field(outcome, "superseded", [])),
        "quarantined": bool(_field(outcome, "quarantined", False)),
        "reasons": list(_field(outcome, "reasons", [])),
    }


def proposed(proposal: ProposedWrite, **fields: Any) -> dict[str, Any]:
    """The answer to a write held for a person's approval."""
    return {
        **fields,
        "status": "proposed",
        "proposal_id": str(proposal.pk),
        "quarantined": bool(proposal.screen_reasons),
        "reasons": list(proposal.screen_reasons),
    }


def _held_save(proposal: ProposedWrite) -> Status:
    """POST /memory/save's answer for a long-term write (a fact, a removal)
    held for a person's approval."""
    return Status(
        202,
        proposed(
            proposal,
            ok=True,
            block="auto",
            usage=0.0,
            message=PROPOSED_MESSAGE % proposal.pk,
            changed=False,
        ),
    )


def _propose_fact(*, space: Space, actor: str, **fields: Any) -> ProposedWrite:
    return approval.propose_fact(space=space, proposer=actor, source="api", **fields)


def _recall(
    *,
    spaces: tuple[Space, ...],
    query: str,
    k: int,
    as_of: datetime | None,
    types: list[str] | None,
    known_at: datetime | None = None,
    include_history: bool = False,
) -> dict[str, Any]:
    from memory.services.recall import recall

    response = recall(
        spaces=spaces,
        query=query,
        k=k,
        as_of=as_of,
        known_at=known_at,
        include_history=include_history,
        types=types,
    )
    skill_usage.returned(space_id=spaces[0].pk, results=response.results)
    results = [asdict(r) if is_dataclass(r) else dict(r) for r in response.results]
    return {"results": results, "took_ms": response.took_ms}


# --- operations -----------------------------------------------------------------------


@router.post("/memory/save", response={200: MemorySaveOut, 202: MemorySaveOut})
def memory_save(request: SpaceRequest, payload: MemorySaveIn) -> Any:
    scope = scopes.core_scope(payload.block, payload.scope, request.user_space)
    space = scopes.write_space(request.space, request.user_space, scope)
    if payload.block == "auto":
        if payload.action == "remove":
            needle = payload.old_text or payload.text
            if not needle.strip():
                raise Invalid("old_text: say which fact to remove")
            if approval.gates_facts():
                removal = approval.propose_forget(
                    space=space, proposer=_actor(request), query=needle
                )
                return _held_save(removal)
            count = forget.forget(space=space, query=needle, actor=_actor(request))
            return {
                "ok": count > 0,
                "block": "auto",
                "usage": 0.0,
                "message": f"Forgot {count} fact(s)." if count else "No fact matched.",
                "changed": count > 0,
            }
        if not payload.text.strip():
            raise Invalid("text: required for add and replace")
        if approval.gates_facts():
            proposal = _propose_fact(space=space, actor=_actor(request), text=payload.text)
            return _held_save(proposal)
        saved = save_fact(space=space, source="api", text=payload.text)
        return {
            "ok": True,
            "block": "auto",
            "usage": 0.0,
            "message": (
                f"Quarantined by the injection screen ({', '.join(saved['reasons'])}): "
                "stored for review, never recalled."
                if saved["quarantined"]
                else f"Saved to long-term memory ({saved['action']})."
            ),
            **saved,
            "changed": saved["action"] != "NOOP",
        }
    if approval.gates_core():
        refusal, held = approval.propose_entry(
            space=space,
            label=payload.block,
            action=payload.action,
            text=payload.text,
            old_text=payload.old_text,
            proposer=_actor(request),
        )
        if held is not None:
            block = core.load_block(space=space, label=payload.block)
            return Status(
                202,
                proposed(
                    held,
                    ok=True,
                    block=payload.block,
                    usage=core.usage(block=block),
                    message=PROPOSED_MESSAGE % held.pk,
                    version=block.version,
                    tokens=core.tokens(block=block),
                    budget_tokens=block.budget_tokens,
                    changed=False,
                ),
            )
        assert refusal is not None
        result = refusal
    else:
        result = core.save(
            space=space,
            label=payload.block,
            action=payload.action,
            text=payload.text,
            old_text=payload.old_text,
            author=_actor(request),
        )
    return {
        "ok": result.ok,
        "block": payload.block,
        "usage": result.usage,
        "message": result.message,
        "version": result.block.version,
        "tokens": core.tokens(block=result.block),
        "budget_tokens": result.block.budget_tokens,
        "demoted": [str(i) for i in result.demoted],
        "changed": result.changed,
        "quarantined": bool(result.reasons),
        "reasons": result.reasons,
    }


@router.post(
    "/memory/forget", response={200: MemoryForgetOut, 202: MemoryForgetOut}, exclude_none=True
)
@raises(404)
def memory_forget(request: SpaceRequest, payload: MemoryForgetIn) -> Any:
    # An item id of the linked user space is forgotten (and audited) there;
    # any other space's id is not found, as a missing one.
    space = (
        scopes.space_for_item(request.read_spaces, payload.item_id)
        if payload.item_id is not None
        else _space(request)
    )
    if approval.gates_facts():
        held = approval.propose_forget(
            space=space,
            proposer=_actor(request),
            item_id=payload.item_id,
            query=payload.query,
            everything=payload.everything,
            confirm=payload.confirm,
            hard=payload.hard,
        )
        return Status(202, {"forgotten": 0, "status": "proposed", "proposal_id": str(held.pk)})
    done = forget.forget_with_report(
        space=space,
        item_id=payload.item_id,
        query=payload.query,
        everything=payload.everything,
        confirm=payload.confirm,
        hard=payload.hard,
        actor=_actor(request),
    )
    return {"forgotten": done.count, "verification": done.verification}


@router.post("/memory/report", response=MemoryReportOut)
@raises(404)
def memory_report(request: SpaceRequest, payload: MemoryReportIn) -> dict[str, Any]:
    skill = skill_usage.report(
        space=_space(request), skill_id=payload.skill_id, actor=_actor(request), note=payload.note
    )
    return {
        "skill_id": skill.pk,
        "usage_count": skill.usage_count,
        "last_used_at": skill.last_used_at,
    }


@router.post("/memory/remember_fact", response={200: RememberFactOut, 202: RememberFactOut})
def remember_fact(request: SpaceRequest, payload: RememberFactIn) -> Any:
    fields = payload.dict(exclude={"scope"})
    space = scopes.write_space(request.space, request.user_space, payload.scope)
    if approval.gates_facts():
        proposal = _propose_fact(space=space, actor=_actor(request), **fields)
        return Status(202, proposed(proposal, id=None, action="PROPOSED"))
    return save_fact(space=space, source="api", **fields)


@router.post("/memory/recall_facts", response=RecallAliasOut)
def recall_facts(request: SpaceRequest, payload: RecallAliasIn) -> dict[str, Any]:
    return _recall(
        spaces=request.read_spaces,
        query=payload.query,
        k=payload.k,
        as_of=payload.as_of,
        known_at=payload.known_at,
        types=["fact", "insight"],
    )


@router.post("/memory/search_conversations", response=RecallAliasOut)
def search_conversations(request: SpaceRequest, payload: RecallAliasIn) -> dict[str, Any]:
    return _recall(
        spaces=request.read_spaces,
        query=payload.query,
        k=payload.k,
        as_of=payload.as_of,
        known_at=payload.known_at,
        types=["turn"],
    )


@router.post("/memory/recall_sessions", response=RecallAliasOut)
def recall_sessions(request: SpaceRequest, payload: RecallAliasIn) -> dict[str, Any]:
    return _recall(
        spaces=request.read_spaces,
        query=payload.query,
        k=payload.k,
        as_of=payload.as_of,
        known_at=payload.known_at,
        types=["summary"],
    )
