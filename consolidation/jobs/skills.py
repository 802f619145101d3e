"""Step 6: procedural memory.

Propose skill drafts for workflows repeated across sessions. A turn's steps
are the commands and numbered or bulleted actions it lists (`code spans`,
"$ cmd" lines, "1. do x" items); a run of CONSOLIDATE_SKILL_MIN_STEPS
consecutive steps that shows up in CONSOLIDATE_SKILL_MIN_SESSIONS sessions
becomes a draft. Drafts are stored disabled for a person to enable: the
system never grants itself a capability.

Then reinforce: facts related to a skill used since the previous run get
their importance raised and their last_seen refreshed, the decay score's
counterweights."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Least
from django.utils import timezone
from pydantic import BaseModel, Field

from consolidation.jobs._common import (
    ACTOR,
    DATA_NOTE,
    LlmSkipped,
    StepContext,
    StepResult,
    as_data,
    cfg,
    usable_turns,
)
from memory.models import MemoryItem, Skill
from memory.search import search
from memory.services import audit

_CODE = re.compile(r"`([^`\n]{2,120})`")
_SHELL = re.compile(r"^\s*\$\s+(.{2,120})$", re.M)
_LIST = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.{3,160})$", re.M)


class SkillAnswer(BaseModel):
    name: str = Field(max_length=100)
    description: str = Field(default="", max_length=500)
    steps: list[str] = Field(default_factory=list, max_length=20)


SYSTEM = (
    "The user ran the same multi-step workflow in several conversations. Write it as a "
    'reusable procedure: JSON {"name": short name, "description": when to use it, '
    '"steps": [one imperative step per item]}. ' + DATA_NOTE
)


def step_key(step: str) -> str:
    """Steps compare by their first three words, so `pytest -q` and
    `pytest -x` count as the same step but `git pull` and `git push` do not."""
    return " ".join(step.lower().split()[:3])


def steps_of(text: str) -> list[tuple[int, str]]:
    found = [(m.start(), m.group(1).strip()) for m in _SHELL.finditer(text)]
    found += [(m.start(), m.group(1).strip()) for m in _CODE.finditer(text)]
    found += [(m.start(), m.group(1).strip()) for m in _LIST.finditer(text)]
    found.sort()
    out: list[tuple[int, str]] = []
    for pos, step in found:
        if out and step_key(out[-1][1]) == step_key(step):
            continue  # the same command quoted twice in a row
        out.append((pos, step))
    return out


@dataclass
class Workflow:
    keys: tuple[str, ...]
    sessions: set[int] = field(default_factory=set)
    examples: list[list[str]] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)


def find_workflows(ctx: StepContext) -> list[Workflow]:
    per_session: dict[int, list[tuple[str, str, str | None]]] = defaultdict(list)
    for turn in usable_turns(ctx.space).order_by("ts", "id").iterator(chunk_size=500):
        for _, step in steps_of(turn.text):
            per_session[turn.session_id].append((step_key(step), step, turn.ref))
    n = cfg("CONSOLIDATE_SKILL_MIN_STEPS")
    found: dict[tuple[str, ...], Workflow] = {}
    for session_id, steps in per_session.items():
        seen_here: set[tuple[str, ...]] = set()
        for size in range(min(len(steps), 8), n - 1, -1):
            for start in range(0, len(steps) - size + 1):
                window = steps[start : start + size]
                keys = tuple(k for k, _, _ in window)
                if len(set(keys)) < n or keys in seen_here:
                    continue
                seen_here.add(keys)
                wf = found.setdefault(keys, Workflow(keys=keys))
                wf.sessions.add(session_id)
                if len(wf.examples) < 3:
                    wf.examples.append([s for _, s, _ in window])
                wf.refs += [r for _, _, r in window if r and r not in wf.refs][:10]
    repeated = [
        w for w in found.values() if len(w.sessions) >= cfg("CONSOLIDATE_SKILL_MIN_SESSIONS")
    ]
    # Longest first; a workflow inside an already chosen one is the same habit.
    repeated.sort(key=lambda w: (len(w.keys), len(w.sessions)), reverse=True)
    chosen: list[Workflow] = []
    for w in repeated:
        joined = " > ".join(w.keys)
        if any(joined in " > ".join(c.keys) for c in chosen):
            continue
        chosen.append(w)
    return chosen


def _name(keys: tuple[str, ...]) -> str:
    return ("workflow: " + " → ".join(k.split()[0] for k in keys))[:120]


def propose(ctx: StepContext, result: StepResult) -> None:
    limit = cfg("CONSOLIDATE_SKILL_MAX_DRAFTS")
    existing = list(Skill.objects.filter(space=ctx.space).values_list("name", "body"))
    for wf in find_workflows(ctx):
        if result.counts["drafts"] >= limit:
            break
        body_steps = wf.examples[0]
        if any(all(s in body for s in body_steps) for _, body in existing):
            continue  # a skill already describes these steps
        name, description = _name(wf.keys), ""
        try:
            answer = ctx.llm_json(
                purpose="skill_draft",
                system=SYSTEM,
                user=as_data(" ; ".join(example) for example in wf.examples),
                schema=SkillAnswer,
            )
            if answer.name.strip() and answer.steps:
                name, description = answer.name.strip()[:120], answer.description.strip()
                body_steps = [s.strip() for s in answer.steps if s.strip()]
        except LlmSkipped:
            pass
        if not description:
            description = (
                f"Seen in {len(wf.sessions)} sessions: the same {len(wf.keys)} steps in this order."
            )
        body = "\n".join(f"{i}. {s}" for i, s in enumerate(body_steps, 1))
        try:
            with transaction.atomic():
                skill = Skill.objects.create(
                    space=ctx.space,
                    name=name,
                    description=description,
                    body=body,
                    enabled=False,
                    is_draft=True,
                    source=ACTOR,
                    evidence_turn_refs=wf.refs[:20],
                )
                audit.record(
                    space=ctx.space,
                    action="add",
                    target_type="skill",
                    target_id=skill.pk,
                    actor=ACTOR,
                    draft=True,
                    sessions=len(wf.sessions),
                )
        except IntegrityError:
            continue  # a skill with this name exists: a person already has it
        existing.append((name, body))
        result.add("drafts")


def reinforce(ctx: StepContext, result: StepResult) -> None:
    used = Skill.objects.filter(space=ctx.space, enabled=True, usage_count__gt=0)
    if ctx.since is not None:
        used = used.filter(last_used_at__gte=ctx.since)
    boost = cfg("CONSOLIDATE_SKILL_REINFORCE")
    now = timezone.now()
    for skill in used:
        query = f"{skill.name} {skill.description}"
        ids = [h.id for h in search("item", space_id=ctx.space.pk, query=query, limit=5)]
        ids = list(
            MemoryItem.objects.filter(pk__in=ids)
            .exclude(kind=MemoryItem.Kind.INSIGHT)
            .values_list("pk", flat=True)
        )
        if not ids:
            continue
        with transaction.atomic():
            MemoryItem.objects.filter(pk__in=ids).update(
                importance=Least(F("importance") + boost, 1.0), last_seen=now
            )
            audit.record(
                space=ctx.space,
                action="reinforce",
                target_type="skill",
                target_id=skill.pk,
                actor=ACTOR,
                items=ids,
            )
        result.add("reinforced", len(ids))


def run(ctx: StepContext) -> StepResult:
    result = StepResult(counts={"drafts": 0, "reinforced": 0})
    propose(ctx, result)
    reinforce(ctx, result)
    return result
