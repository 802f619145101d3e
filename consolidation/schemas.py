from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema
from pydantic import Field


class ConsolidateIn(Schema):
    steps: list[str] | None = Field(
        default=None, max_length=20, description="run only these steps (default: all)"
    )
    skip: list[str] = Field(default_factory=list, max_length=20, description="steps to skip")


class ConsolidateOut(Schema):
    run_id: int
    status: str
    created: bool  # False: a run of this space was already active; this is it


class RunOut(Schema):
    id: int
    status: str
    trigger: str
    report: str
    figures: dict[str, int]
    steps: dict[str, Any]
    llm_calls: int
    errors: list[Any]
    duration_seconds: float | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class RunListOut(Schema):
    count: int
    runs: list[RunOut]
