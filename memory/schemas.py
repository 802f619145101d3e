"""Request and response schemas shared by the memory API modules."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field, model_serializer

from engram_site.bounds import Instant

# Where a write goes for a key linked to a user space (memory.services.scopes):
# "project" (the default) is the key's own space, "user" the linked one.
Scope = Literal["user", "project"]
SCOPE_DESCRIPTION = (
    'Where this is written: "project" (default), the key\'s own space, or "user", the '
    "user space the key is linked to (400 when it has none)."
)


class TurnIn(Schema):
    session_id: str = Field(min_length=1, max_length=200)
    role: Literal["user", "assistant"]
    text: str = Field(min_length=1, max_length=64_000)
    ts: Instant | None = None
    ref: str | None = Field(default=None, min_length=1, max_length=200)
    metadata: dict[str, Any] = Field(default_factory=dict)
    scope: Scope | None = Field(default=None, description=SCOPE_DESCRIPTION)


class TurnOut(Schema):
    id: str
    session_id: str
    ref: str | None
    queued: bool
    # Stored but kept out of recall and context by the injection screen, and why.
    quarantined: bool = False
    reasons: list[str] = Field(default_factory=list)
    space: str = ""  # the space it was written to (see `scope`)


class TurnBatchIn(Schema):
    turns: list[TurnIn] = Field(min_length=1, max_length=500)
    # For every turn that names no scope of its own.
    scope: Scope | None = Field(default=None, description=SCOPE_DESCRIPTION)


class QuarantinedTurnOut(Schema):
    index: int  # position in the posted batch
    id: str
    reasons: list[str]


class TurnBatchOut(Schema):
    ids: list[str]
    queued: int
    # The turns of the batch the injection screen quarantined, and why.
    quarantined: list[QuarantinedTurnOut] = Field(default_factory=list)


class StatusOut(Schema):
    space: str
    facts: int
    entities: int
    relations: int
    turns: int
    sessions: int
    pending_jobs: int  # ingest work: posted turns not yet through the pipeline
    pending_imports: int  # background import jobs queued or running
    dead_jobs: int
    last_consolidation: str | None
    embeddings: str
    llm_providers: int


class HealthOut(Schema):
    status: str


class DetailOut(Schema):
    detail: str


class SourceOut(Schema):
    session_id: str | None
    turn_refs: list[str]
    document_id: str | None = Field(default=None, description="Doc results: the document.")
    title: str | None = Field(default=None, description="Doc results: the document's title.")
    path: str | None = Field(default=None, description="Doc results: the document's path.")
    section: str | None = Field(
        default=None, description='Doc results: the section path, e.g. "Install > Docker".'
    )
    provider: str | None = Field(
        default=None, description="Provider results: the external provider that answered."
    )
    provider_id: str | None = Field(
        default=None, description="Provider results: the provider's own id for the entry."
    )

    @model_serializer(mode="wrap")
    def _only_doc_keys_on_docs(self, handler: Any) -> Any:
        # The document keys appear on doc results only, the provider keys on
        # provider results only: every other result's source stays exactly
        # {"session_id", "turn_refs"}.
        data = handler(self)
        if isinstance(data, dict) and data.get("document_id") is None:
            for key in ("document_id", "title", "path", "section"):
                data.pop(key, None)
        if isinstance(data, dict) and data.get("provider") is None:
            data.pop("provider", None)
            data.pop("provider_id", None)
        return data


class ResultOut(Schema):
    """One recall result, as /recall, /memory/search and the legacy aliases answer it."""

    id: str
    type: str
    text: str
    score: float
    channels: dict[str, float]
    created_at: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    source: SourceOut
    current: bool | None = Field(
        default=None,
        description="Facts and insights: true at the asked instant by what was known then. "
        "Null for turns and summaries: they are episodes, not claims about now.",
    )
    superseded_by: str | None = Field(
        default=None,
        description="The fact that replaced this one; for a turn, the fact that replaced "
        'one it stated ("retracted" when it was taken back).',
    )
    space: str = Field(default="", description="The space the result came from.")
