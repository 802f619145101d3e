"""Writes that wait for a person (ENGRAM_WRITE_APPROVAL).

With `core`, a core-block write made by an agent (an API key, a tool over
HTTP or MCP) is kept as a ProposedWrite instead of changing the block; with
`all`, an explicit fact write too. Turn ingestion is never gated: facts
extracted from conversation would wait forever and learning would stall.
Writes by a person (dashboard, admin) never come here.

A proposal is screened when it is made, like the direct write: a core text
the strict screen flags is refused there and then, secrets are redacted
before anything is stored, and a fact the screen flags keeps the screen's
reasons (approved, it is stored quarantined, as the direct write would).

Approving runs the payload through the same service the direct write uses
(memory.services.core / facts: versions, supersede, audit, re-index).

A proposal made against a block version that has moved on since:
- an entry edit (memory_save add / replace / remove) is applied to the
  current version, as the agent's own save would be; the Review view shows
  its diff against the current text, and it fails (409) only when the
  entry it names is no longer there exactly once;
- a whole-block text (PUT, undo, rollback) is flagged stale and refused
  (409): applying it would silently undo the changes made in between, the
  very thing the direct write's expected_version prevents. It can only be
  rejected; the agent proposes again from the current version.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory import screening
from memory.errors import Conflict, Invalid, NotFound
from memory.models import CoreBlock, MemoryItem, ProposedWrite, Space
from memory.services import audit, core, curation

MODES = ("off", "core", "all")


def mode() -> str:
    return str(settings.ENGRAM["WRITE_APPROVAL"])


def gates_core() -> bool:
    return mode() in ("core", "all")


def gates_facts() -> bool:
    return mode() == "all"


# --- proposing --------------------------------------------------------------------------


def _proposed(
    *,
    space: Space,
    target: str,
    payload: dict[str, Any],
    proposer: str,
    reason: str = "",
    label: str = "",
    base_version: int | None = None,
    screen_reasons: list[str] | None = None,
) -> ProposedWrite:
    proposal = ProposedWrite.objects.create(
        space=space,
        target=target,
        label=label,
        payload=payload,
        base_version=base_version,
        proposer=proposer[:60],
        reason=reason[:200],
        screen_reasons=screen_reasons or [],
    )
    audit.record(
        space=space,
        action="propose",
        target_type="proposal",
        target_id=proposal.pk,
        actor=proposer[:60],
        target=target,
        label=label,
        op=payload.get("op", target),
    )
    return proposal


def propose_block_text(
    *,
    space: Space,
    label: str,
    text: str,
    proposer: str,
    reason: str = "",
    expected_version: int | None = None,
) -> tuple[CoreBlock, ProposedWrite | None]:
    """A whole-block text (PUT, undo, rollback) as a proposal. The same checks
    as core.set_text, up front: a stale expected_version (409), the strict
    screen and the budget (422). None when the block already reads so."""
    block = core.get_block(space=space, label=label)
    if expected_version is not None and expected_version != block.version:
        raise Conflict(
            f"the {label} block is at version {block.version}, not {expected_version}: "
            "someone else changed it; reload and apply your change again"
        )
    new_text = core.checked_text(block=block, text=text)
    if new_text == block.text:
        return block, None
    proposal = _proposed(
        space=space,
        target=ProposedWrite.Target.CORE,
        label=label,
        payload={"op": "set", "text": new_text},
        base_version=block.version,
        proposer=proposer,
        reason=reason,
    )
    return block, proposal


def propose_entry(
    *,
    space: Space,
    label: str,
    action: str,
    text: str,
    old_text: str,
    proposer: str,
    why: str = "",
) -> tuple[core.SaveResult | None, ProposedWrite | None]:
    """memory_save on a core block as a proposal: (refusal, None) when the
    save would be refused now (screen, no such entry), else (None, proposal)."""
    if action not in ("add", "replace", "remove"):
        raise Invalid(f"action: must be add, replace or remove, not {action!r}")
    block = core.get_block(space=space, label=label)
    entry = ""
    if action in ("add", "replace"):
        entry, refusal = core.screen_entry(block=block, text=text, author=proposer)
        if refusal is not None:
            return refusal, None
    needle = " ".join(old_text.split())
    if action in ("replace", "remove"):
        if not needle:
            raise Invalid(f"old_text: required for {action} (a unique part of the entry)")
        found, why_not = core.entry_target(core.entries(block.text), needle, label)
        if found is None:
            return core.refused(block, why_not), None
        # The needle may quote a secret the entry holds: stored redacted.
        needle = screening.redact(needle)
    proposal = _proposed(
        space=space,
        target=ProposedWrite.Target.CORE,
        label=label,
        payload={"op": "save", "action": action, "text": entry, "old_text": needle},
        base_version=block.version,
        proposer=proposer,
        reason=why,
    )
    return None, proposal


def propose_fact(
    *,
    space: Space,
    proposer: str,
    source: str,
    text: str,
    subject: str = "",
    predicate: str = "",
    object: str = "",
    kind: str = "fact",
    importance: float = 0.5,
    valid_from: datetime | None = None,
    replaces: int | None = None,
) -> ProposedWrite:
    """An explicit fact write as a proposal, screened as the fact service
    screens it: redacted text stored, the screen's reasons kept. `replaces`:
    the id of a fact it supersedes once written (memory_facts)."""
    result = screening.screen_fact(text, kind=kind, importance=importance)
    if not result.text.strip():
        raise Invalid("text: nothing is left of it once screened")
    payload = {
        "op": "fact",
        "text": result.text,
        "subject": screening.redact(subject),
        "predicate": predicate,
        "object": screening.redact(object),
        "kind": kind,
        "importance": importance,
        "valid_from": valid_from.isoformat() if valid_from else None,
        "source": source,
    }
    if replaces is not None:
        payload["replaces"] = replaces
    return _proposed(
        space=space,
        target=ProposedWrite.Target.FACT,
        payload=payload,
        proposer=proposer,
        screen_reasons=result.reasons if result.flagged else [],
    )


def propose_forget(
    *,
    space: Space,
    proposer: str,
    item_id: int | str | None = None,
    query: str | None = None,
    everything: bool = False,
    confirm: str | None = None,
    hard: bool = False,
) -> ProposedWrite:
    """A forget (memory_forget, POST /memory/forget, memory_save remove) as
    a proposal under ENGRAM_WRITE_APPROVAL=all: checked as the forget
    checks it (one of id, query or everything; the id found; a wipe's typed
    space name), nothing forgotten until approved. The query is kept
    redacted, as the texts it is matched against are."""
    chosen = sum([item_id is not None, bool(query and query.strip()), everything])
    if chosen != 1:
        raise Invalid("give exactly one of item_id, query or everything")
    if everything and confirm != space.name:
        raise Invalid("confirm: type the space name exactly to wipe all of its memory")
    pk = None
    if item_id is not None:
        raw = str(item_id).strip()
        found = raw.isdigit() and MemoryItem.objects.filter(space=space, pk=int(raw)).exists()
        if not found:
            raise NotFound(f"item {item_id} not found")
        pk = int(raw)
    payload = {
        "op": "forget",
        "item_id": pk,
        "query": screening.redact(query.strip()) if query and query.strip() else None,
        "everything": everything,
        "hard": hard,
    }
    return _proposed(
        space=space, target=ProposedWrite.Target.FACT, payload=payload, proposer=proposer
    )


def propose_correction(*, space: Space, old: MemoryItem, text: str, proposer: str) -> ProposedWrite:
    """memory_update (correct an entry by id) as a proposal: the same checks
    as curation.correct up front (a live entry, a text the screen passes)."""
    screened = curation.check(old=old, text=text)
    return _proposed(
        space=space,
        target=ProposedWrite.Target.FACT,
        payload={"op": "correct", "id": old.pk, "text": screened, "kind": old.kind},
        proposer=proposer,
    )


# --- reading ------------------------------------------------------------------------------


@dataclass
class Preview:
    """What approving would do now: a unified diff against the current block
    (core), whether the proposal is stale, and why it would fail if it would."""

    diff: str = ""
    stale: bool = False
    current_version: int | None = None
    blocked: str = ""


def _after(block: CoreBlock, payload: dict[str, Any]) -> tuple[str | None, str]:
    """The block's text once the payload is applied to its current version,
    or None and why it cannot be. Budget overflow is left to the service."""
    if payload.get("op") == "set":
        return str(payload.get("text", "")), ""
    lines = core.entries(block.text)
    action, entry = payload.get("action"), str(payload.get("text", ""))
    if action == "add":
        return "\n".join(lines if entry in lines else [*lines, entry]), ""
    found, why_not = core.entry_target(lines, str(payload.get("old_text", "")), block.label)
    if found is None:
        return None, why_not
    if action == "replace":
        lines[found] = entry
    else:
        del lines[found]
    return "\n".join(lines), ""


def preview(proposal: ProposedWrite, block: CoreBlock | None = None) -> Preview:
    """`block`: the proposal's block, when the caller read it already (a page
    of proposals reads each block once)."""
    if proposal.target != ProposedWrite.Target.CORE:
        return Preview()
    if block is None:
        block = core.load_block(space=proposal.space, label=proposal.label)
    stale = proposal.base_version is not None and proposal.base_version != block.version
    after, why_not = _after(block, proposal.payload)
    if after is None:
        return Preview(stale=stale, current_version=block.version, blocked=why_not)
    blocked = ""
    if stale and proposal.payload.get("op") == "set":
        blocked = (
            f"stale: proposed on version {proposal.base_version}, the block is at "
            f"{block.version}; approving would undo the changes made since. Reject it."
        )
    diff = "\n".join(
        difflib.unified_diff(
            core.entries(block.text),
            core.entries(after),
            fromfile=f"{block.label}@v{block.version}",
            tofile=f"{block.label} (proposed)",
            lineterm="",
        )
    )
    return Preview(diff=diff, stale=stale, current_version=block.version, blocked=blocked)


def blocks_for(*, space: Space, proposals: list[ProposedWrite]) -> dict[str, CoreBlock]:
    """The core blocks a page of proposals targets, read in one query. A
    block never written yet is the empty version 0 (not created by a read)."""
    labels = {p.label for p in proposals if p.target == ProposedWrite.Target.CORE}
    found = {b.label: b for b in CoreBlock.objects.filter(space=space, label__in=labels)}
    for label in labels - set(found):
        found[label] = CoreBlock(space=space, label=label, budget_tokens=core.budget_for(label))
    return found


def pending(*, space: Space) -> Any:
    return ProposedWrite.objects.filter(space=space, status=ProposedWrite.Status.PENDING)


# --- deciding ---------------------------------------------------------------------------


def _claim(proposal: ProposedWrite, *, status: str, actor: str) -> None:
    """Mark the proposal decided, or Conflict when someone decided it first:
    a conditional UPDATE, so two curators cannot both apply it."""
    now = timezone.now()
    claimed = ProposedWrite.objects.filter(
        pk=proposal.pk, status=ProposedWrite.Status.PENDING
    ).update(status=status, decided_by=actor[:150], decided_at=now)
    if not claimed:
        current = ProposedWrite.objects.filter(pk=proposal.pk).values_list("status", flat=True)
        raise Conflict(f"proposal {proposal.pk} was decided already ({current.first()})")
    proposal.status, proposal.decided_by, proposal.decided_at = status, actor[:150], now


def _unclaim(proposal: ProposedWrite) -> None:
    ProposedWrite.objects.filter(pk=proposal.pk).update(
        status=ProposedWrite.Status.PENDING, decided_by="", decided_at=None
    )
    proposal.status, proposal.decided_by, proposal.decided_at = "pending", "", None


def _check(space: Space, proposal: ProposedWrite) -> None:
    if proposal.space_id != space.pk:
        raise Invalid(f"id: proposal {proposal.pk} is not in this space")
    if proposal.status != ProposedWrite.Status.PENDING:
        raise Conflict(f"proposal {proposal.pk} was decided already ({proposal.status})")


def _apply_core(proposal: ProposedWrite, actor: str) -> dict[str, Any]:
    space, label, payload = proposal.space, proposal.label, proposal.payload
    why = f"approved by {actor}"
    if payload.get("op") == "set":
        block = core.load_block(space=space, label=label)
        if proposal.base_version is not None and proposal.base_version != block.version:
            raise Conflict(
                f"proposal {proposal.pk} is stale: proposed on version {proposal.base_version} "
                f"of the {label} block, which is at {block.version} now; reject it"
            )
        block = core.set_text(
            space=space,
            label=label,
            text=str(payload.get("text", "")),
            author=proposal.proposer,
            reason=f"{proposal.reason or 'edit'} ({why})",
            expected_version=proposal.base_version,
        )
        return {"version": block.version}
    result = core.save(
        space=space,
        label=label,
        action=str(payload.get("action", "")),
        text=str(payload.get("text", "")),
        old_text=str(payload.get("old_text", "")),
        author=proposal.proposer,
        why=f"{proposal.reason}; {why}" if proposal.reason else why,
    )
    if not result.ok:
        raise Conflict(f"proposal {proposal.pk} no longer applies: {result.message}")
    return {"version": result.block.version, "changed": result.changed, "message": result.message}


def _live(space: Space, pk: int, proposal: ProposedWrite) -> MemoryItem:
    item = MemoryItem.objects.filter(space=space, pk=pk).first()
    if item is None or not item.is_live:
        raise Conflict(f"proposal {proposal.pk} no longer applies: fact {pk} is not live any more")
    return item


def _apply_correction(proposal: ProposedWrite) -> dict[str, Any]:
    old = _live(proposal.space, int(proposal.payload.get("id") or 0), proposal)
    new = curation.correct(
        space=proposal.space,
        old=old,
        text=str(proposal.payload.get("text", "")),
        actor=proposal.proposer,
        source="tool:update",
    )
    return {"id": new.pk, "action": "UPDATE", "superseded": [old.pk]}


def _apply_forget(proposal: ProposedWrite) -> dict[str, Any]:
    from memory.services import forget

    payload, space = proposal.payload, proposal.space
    everything = bool(payload.get("everything"))
    done = forget.forget_with_report(
        space=space,
        item_id=payload.get("item_id"),
        query=payload.get("query"),
        everything=everything,
        confirm=space.name if everything else None,  # typed when it was proposed
        hard=bool(payload.get("hard")),
        actor=proposal.proposer,
    )
    return {"action": "FORGET", "forgotten": done.count, "verified": _verified(done)}


def _verified(done: Any) -> bool | None:
    report = done.verification
    return None if report is None else bool(report.get("verified"))


def _apply_fact(proposal: ProposedWrite) -> dict[str, Any]:
    from memory.services import facts

    if proposal.payload.get("op") == "correct":
        return _apply_correction(proposal)
    if proposal.payload.get("op") == "forget":
        return _apply_forget(proposal)
    fields = dict(proposal.payload)
    fields.pop("op", None)
    replaces = fields.pop("replaces", None)
    source = str(fields.pop("source", "api"))
    raw_when = fields.pop("valid_from", None)
    when = datetime.fromisoformat(raw_when) if raw_when else None
    result = facts.save_fact(
        space=proposal.space,
        source=source,
        actor=proposal.proposer,
        valid_from=when,
        judge=True,  # as the direct write: an uncertain case goes to the write judge
        **fields,
    )
    superseded = list(result.superseded)
    new = result.item
    if replaces is not None and new is not None and new.pk != replaces:
        # As memory_facts does for a direct write: the named fact is superseded.
        old = MemoryItem.objects.filter(space=proposal.space, pk=replaces).first()
        if old is not None and replaces not in superseded:
            if facts.supersede(old=old, new=new, actor=proposal.proposer):
                superseded.append(replaces)
    return {
        "id": new.pk if new is not None else None,
        "action": result.action,
        "superseded": superseded,
        "quarantined": result.quarantined,
    }


def approve(*, space: Space, proposal: ProposedWrite, actor: str) -> dict[str, Any]:
    """Apply the proposal through the direct write's service and mark it
    approved; on any refusal (stale, over budget, screen) it stays pending
    and the refusal is raised. Returns what was written."""
    _check(space, proposal)
    proposal.space = space
    _claim(proposal, status=ProposedWrite.Status.APPROVED, actor=actor)
    try:
        if proposal.target == ProposedWrite.Target.CORE:
            result = _apply_core(proposal, actor)
        else:
            result = _apply_fact(proposal)
    except Exception:
        # Not applied: undecided again, so it can be rejected or retried.
        _unclaim(proposal)
        raise
    ProposedWrite.objects.filter(pk=proposal.pk).update(result=result)
    proposal.result = result
    audit.record(
        space=space,
        action="proposal_approve",
        target_type="proposal",
        target_id=proposal.pk,
        actor=actor,
        target=proposal.target,
        label=proposal.label,
        proposer=proposal.proposer,
        applied=result,
    )
    return result


def reject(*, space: Space, proposal: ProposedWrite, actor: str) -> None:
    """Keep the record, write nothing."""
    _check(space, proposal)
    _claim(proposal, status=ProposedWrite.Status.REJECTED, actor=actor)
    audit.record(
        space=space,
        action="proposal_reject",
        target_type="proposal",
        target_id=proposal.pk,
        actor=actor,
        target=proposal.target,
        label=proposal.label,
        proposer=proposal.proposer,
    )
