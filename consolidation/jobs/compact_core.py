"""Step 7: compact core memory above CORE_COMPACT_ABOVE of its budget.

First densify: exact and near-identical entries collapse into the longer one,
whitespace is squeezed. If the block is still above CORE_COMPACT_TARGET, the
least-used entries are demoted to semantic facts (so nothing is lost) until it
fits. "Least used" is the entry whose words the space's recent turns mention
least, ties going to the earliest line (the oldest curation). With an LLM the
whole block is first rewritten denser; a rewrite that drops below the target
is kept, anything else falls through to the deterministic path."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, Field

from consolidation.jobs._common import (
    ACTOR,
    DATA_NOTE,
    LlmSkipped,
    StepContext,
    StepResult,
    as_data,
    cfg,
    content_words,
    jaccard,
    space_now,
    token_set,
    usable_turns,
)
from memory.models import CoreBlock
from memory.tokens import estimate_tokens


class CoreAnswer(BaseModel):
    entries: list[str] = Field(max_length=100)


SYSTEM = (
    "This is an agent's always-in-context memory block and it is nearly full. Rewrite it "
    "as fewer, denser one-line entries that keep every distinct fact; merge entries that "
    'overlap. Answer as JSON {"entries": [str, ...]}. ' + DATA_NOTE
)


def densify(lines: list[str]) -> tuple[list[str], int]:
    """Collapse duplicates and near-duplicates; returns (lines, how many merged)."""
    out: list[str] = []
    merged = 0
    threshold = cfg("CONSOLIDATE_MERGE_JACCARD")
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        words = token_set(line)
        twin = next(
            (
                i
                for i, kept in enumerate(out)
                if kept.lower() == line.lower() or jaccard(words, token_set(kept)) >= threshold
            ),
            None,
        )
        if twin is None:
            out.append(line)
            continue
        merged += 1
        if len(line) > len(out[twin]):
            out[twin] = line
    return out, merged


def _usage_counts(ctx: StepContext, lines: list[str]) -> list[int]:
    since = space_now(ctx.space) - timedelta(days=cfg("REFLECT_PERIOD_DAYS"))
    recent = [
        set(content_words(t))
        for t in usable_turns(ctx.space)
        .filter(ts__gte=since)
        .order_by("-ts")
        .values_list("text", flat=True)[:2000]
    ]
    counts = []
    for line in lines:
        words = set(content_words(line.lstrip("-*• ")))
        counts.append(sum(1 for turn in recent if words & turn))
    return counts


def _fits(text: str, budget: int, ratio: float) -> bool:
    return estimate_tokens(text) <= budget * ratio


def compact(ctx: StepContext, block: CoreBlock, result: StepResult) -> None:
    from memory.services import core

    target = cfg("CORE_COMPACT_TARGET")
    lines = core.entries(block.text)
    before = core.usage(block=block)
    try:
        answer = ctx.llm_json(
            purpose="compact_core", system=SYSTEM, user=as_data(lines), schema=CoreAnswer
        )
        rewritten = [" ".join(e.split()) for e in answer.entries if e.strip()]
        if rewritten and _fits("\n".join(rewritten), block.budget_tokens, target):
            lines = rewritten
            result.add("rewritten")
    except LlmSkipped:
        pass
    lines, merged = densify(lines)
    result.add("densified", merged)
    demoted: list[str] = []
    if not _fits("\n".join(lines), block.budget_tokens, target):
        uses = _usage_counts(ctx, lines)
        order = sorted(range(len(lines)), key=lambda i: (uses[i], i))
        drop: set[int] = set()
        for i in order:
            if _fits(
                "\n".join(x for j, x in enumerate(lines) if j not in drop),
                block.budget_tokens,
                target,
            ):
                break
            if len(lines) - len(drop) <= 1:
                break
            drop.add(i)
        demoted = [lines[i] for i in sorted(drop)]
        lines = [x for j, x in enumerate(lines) if j not in drop]
    # Demote first: if the run dies here the entries exist twice, never zero times.
    for entry in demoted:
        # Each entry keeps its own kind (a standing instruction stays one).
        fact = core.demote_entry(
            space=ctx.space, entry=entry, source=ACTOR, actor=ACTOR, importance=0.7
        )
        result.add("demoted")
        kinds = result.detail.setdefault("demoted_kinds", {})
        kind = fact.item.kind if fact.item is not None else "dropped"
        kinds[kind] = kinds.get(kind, 0) + 1
        if fact.item is not None and fact.action in ("ADD", "UPDATE"):
            result.add("facts_added")
    updated = core.set_text(
        space=ctx.space,
        label=block.label,
        text="\n".join(lines),
        author=ACTOR,
        reason=f"compacted from {before:.0%}: {merged} merged, {len(demoted)} demoted to facts",
    )
    result.detail[block.label] = {"before": before, "after": core.usage(block=updated)}
    result.add("compacted")


def run(ctx: StepContext) -> StepResult:
    from memory.services import core

    result = StepResult(counts={"compacted": 0, "densified": 0, "demoted": 0, "facts_added": 0})
    above = cfg("CORE_COMPACT_ABOVE")
    for label in (CoreBlock.Label.USER, CoreBlock.Label.AGENT):
        block = core.get_block(space=ctx.space, label=label)
        if core.usage(block=block) > above:
            compact(ctx, block, result)
    return result
