"""The consolidation steps, in the order a run takes them. Each is a plain
service `run(ctx) -> StepResult`, independent of the others, committing its
own work in small transactions so a run killed halfway leaves consistent
data, and each has a deterministic path that needs no LLM."""

from __future__ import annotations

from collections.abc import Callable

from consolidation.jobs import (
    compact_core,
    decay,
    environment,
    merge,
    promote,
    reembed,
    reflect,
    skills,
    summarize,
)
from consolidation.jobs._common import StepContext, StepResult

STEPS: dict[str, Callable[[StepContext], StepResult]] = {
    "summarize": summarize.run,
    "promote": promote.run,
    "reembed": reembed.run,
    "merge": merge.run,
    "decay": decay.run,
    "reflect": reflect.run,
    "skills": skills.run,
    "compact_core": compact_core.run,
    "environment": environment.run,
}

__all__ = ["STEPS", "StepContext", "StepResult"]
