"""Step 6: procedural memory.

Propose skill drafts for workflows repeated across sessions. A turn's steps
are the commands and numbered or bulleted actions it lists (`code spans`,
"$ cmd" lines, the lines of a fenced block, "1. do x" items, and commands of
well-known tools named in prose: "I ran git pull, then npm test"); a run of
CONSOLIDATE_SKILL_MIN_STEPS consecutive steps that shows up in
CONSOLIDATE_SKILL_MIN_SESSIONS sessions becomes a draft. Steps compare by
command, not by their flags and paths (step_key), so `rsync -av dist/ host:`
and `rsync -avz dist/ host:` are the same step. Drafts are stored disabled
for a person to enable: the system never grants itself a capability.

Then reinforce: facts related to a skill used since the previous run (recall
returned it, or an agent reported using it: memory.services.skill_usage) get
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
    STOPWORDS,
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

_FENCE = re.compile(r"^\s*```[^\n]*\n(.*?)(?:^\s*```|\Z)", re.S | re.M)
_CODE = re.compile(r"(?<!`)`([^`\n]{2,120})`(?!`)")
_SHELL = re.compile(r"^\s*\$\s+(.{2,120})$", re.M)
_LIST = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.{3,160})$", re.M)
# Tools whose name in prose is a command, not an English word ("make" and
# "go" are both, so they count only in code).
TOOLS = (
    "git npm npx yarn pnpm docker docker-compose kubectl helm pip pip3 pytest cargo rustup "
    "terraform ansible-playbook rsync scp ssh brew apt-get systemctl journalctl mvn gradle "
    "poetry uv ruff mypy tox nox heroku flyctl gh psql"
).split()
_PROSE = re.compile(
    r"(?<![\w/.-])((?:"
    + "|".join(re.escape(t) for t in TOOLS)
    + r")(?:\s+(?!(?:then|and|or|after|before|so|which|that|again|first|but)\b)[\w@:/.=~+-]+){1,6})",
    re.I,
)
_ARG = re.compile(r"^[a-z][a-z0-9_.+-]*$")


class SkillAnswer(BaseModel):
    name: str = Field(max_length=100)
    description: str = Field(default="", max_length=500)
    steps: list[str] = Field(default_factory=list, max_length=20)


SYSTEM = (
    "The user ran the same multi-step workflow in several conversations. Write it as a "
    'reusable procedure: JSON {"name": short name, "description": when to use it, '
    '"steps": [one imperative step per item]}. ' + DATA_NOTE
)


# A command's own word after these is still the command ("npm run build").
_SUBCOMMANDS = frozenset({"run", "compose", "exec", "manage.py", "run-script"})
_CODE_TOOLS = frozenset({*TOOLS, "make", "go", "python", "python3", "node", "bash", "sh"})


def step_key(step: str) -> str:
    """Steps compare by their command: its leading plain words before the
    first flag, path, address or value; a tool and its subcommand ("git
    pull", "npm run build"), up to three words for a plain action ("open the
    dashboard"). `pytest -q` and `pytest -x` are one step, `git pull` and
    `git push` two, `git push origin main` and `git push` one."""
    words = step.lower().split()
    if words and words[0] == "$":
        words = words[1:]
    key: list[str] = []
    for word in words[:3]:
        if not _ARG.match(word):
            break
        key.append(word)
    if key and key[0] in _CODE_TOOLS and len(key) == 3 and key[1] not in _SUBCOMMANDS:
        key = key[:2]
    return " ".join(key) or " ".join(words[:1])


def _prose(text: str) -> list[tuple[int, str]]:
    """Commands of well-known tools named in running text."""
    found = []
    for m in _PROSE.finditer(text):
        command = re.split(r"[.!?,;](?:\s|$)", m.group(1))[0].strip(" .,;:")
        words = command.split()
        # A tool's bare name, or one followed by a plain word ("npm is
        # slow"), is only a mention.
        if len(words) >= 2 and words[1].lower() not in STOPWORDS:
            found.append((m.start(), command))
    return found


def steps_of(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    covered: list[tuple[int, int]] = []
    for block in _FENCE.finditer(text):
        covered.append(block.span())
        offset = block.start(1)
        for line in block.group(1).splitlines(keepends=True):
            command = line.strip().removeprefix("$ ").strip()
            if len(command) >= 2 and not command.startswith("#"):
                found.append((offset, command[:120]))
            offset += len(line)
    outside = "".join(
        " " * len(c) if any(a <= i < b for a, b in covered) else c for i, c in enumerate(text)
    )
    found += [(m.start(), m.group(1).strip()) for m in _SHELL.finditer(outside)]
    found += [(m.start(), m.group(1).strip()) for m in _CODE.finditer(outside)]
    listed = [(m.start(), m.group(1).strip()) for m in _LIST.finditer(outside)]
    found += listed
    # Prose outside code and list items, which were read above.
    plain = _CODE.sub(lambda m: " " * len(m.group(0)), outside)
    plain = _SHELL.sub(lambda m: " " * len(m.group(0)), plain)
    plain = _LIST.sub(lambda m: " " * len(m.group(0)), plain)
    found += _prose(plain)
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
    return ("workflow: " + " → ".join(keys))[:120]


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


# A skill used this many times since the last run reinforces at most this
# many times the configured boost: habits count, a loop calling it does not.
MAX_USES_COUNTED = 5


def _usage_at_last_run(ctx: StepContext) -> dict[str, int]:
    """Each skill's usage_count as the previous finished run read it."""
    from consolidation.models import ConsolidationRun

    runs = ConsolidationRun.objects.filter(space=ctx.space, status=ConsolidationRun.Status.DONE)
    if ctx.run_id is not None:
        runs = runs.exclude(pk=ctx.run_id)
    steps = (runs.order_by("-started_at").values_list("steps", flat=True).first()) or {}
    usage = ((steps.get("skills") or {}).get("detail") or {}).get("usage") or {}
    return {str(k): int(v) for k, v in usage.items()}


def reinforce(ctx: StepContext, result: StepResult) -> None:
    """Facts a used skill relies on (the best matches for its name and
    description) gain importance in proportion to the skill's uses since
    the previous run, and are seen now."""
    used = Skill.objects.filter(space=ctx.space, enabled=True, usage_count__gt=0)
    before = _usage_at_last_run(ctx)
    result.detail["usage"] = {str(pk): n for pk, n in used.values_list("pk", "usage_count")}
    if ctx.since is not None:
        used = used.filter(last_used_at__gte=ctx.since)
    boost = cfg("CONSOLIDATE_SKILL_REINFORCE")
    now = timezone.now()
    for skill in used:
        uses = skill.usage_count - before.get(str(skill.pk), 0)
        if uses <= 0:
            continue
        result.add("skills_used")
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
                importance=Least(F("importance") + boost * min(uses, MAX_USES_COUNTED), 1.0),
                last_seen=now,
            )
            audit.record(
                space=ctx.space,
                action="reinforce",
                target_type="skill",
                target_id=skill.pk,
                actor=ACTOR,
                items=ids,
                uses=uses,
            )
        result.add("reinforced", len(ids))


def run(ctx: StepContext) -> StepResult:
    result = StepResult(counts={"drafts": 0, "skills_used": 0, "reinforced": 0})
    propose(ctx, result)
    reinforce(ctx, result)
    return result
