"""memory_profile: view, edit (optimistic lock) or roll back a core block."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from engram_site.bounds import INT64_MAX
from memory.errors import Invalid
from memory.services import core, scopes
from memory.tools._common import DRY_RUN, in_scope
from memory.tools.registry import ToolArgs, ToolContext, ToolResult, tool


class ProfileIn(ToolArgs):
    action: Literal["view", "edit", "rollback"] = "view"
    block: Literal["user", "agent"] = "user"
    text: str | None = Field(
        default=None, max_length=8000, description="edit: the whole new text of the block."
    )
    expected_version: int | None = Field(
        default=None,
        ge=0,
        le=INT64_MAX,
        description="edit: the version you read; a mismatch fails loud.",
    )
    version: int | None = Field(
        default=None, ge=0, le=INT64_MAX, description="rollback: the version to restore."
    )
    dry_run: bool = DRY_RUN

    @model_validator(mode="after")
    def _needs(self) -> ProfileIn:
        if self.action == "edit" and (self.text is None or self.expected_version is None):
            raise ValueError("edit needs text and expected_version")
        if self.action == "rollback" and self.version is None:
            raise ValueError("rollback needs version")
        return self


class VersionRow(ToolResult):
    version: int
    author: str
    reason: str
    created_at: datetime


class ProfileOut(ToolResult):
    block: str
    version: int
    text: str
    tokens: int
    budget_tokens: int
    history: list[VersionRow]
    dry_run: bool = False


@tool(
    "memory_profile",
    title="Core memory profile",
    description=(
        "The curated profile (core memory blocks user and agent, in your prompt every turn): "
        "view shows the text and version history; edit writes a whole new text with the "
        "expected_version you read (conflicts fail loud); rollback restores an old version "
        "as a new one. History is never rewritten."
    ),
    result=ProfileOut,
    read_only=False,
    examples=(
        {"action": "view", "block": "user"},
        {"action": "edit", "block": "user", "text": "Name: Sam.", "expected_version": 0},
    ),
)
def memory_profile(ctx: ToolContext, args: ProfileIn) -> dict[str, Any]:
    # The user block of a linked key is the user space's: the one /context shows.
    ctx = in_scope(ctx, scopes.core_scope(args.block, None, ctx.user_space))
    block = core.get_block(space=ctx.space, label=args.block)
    if args.action == "edit" and not args.dry_run:
        block = core.set_text(
            space=ctx.space,
            label=args.block,
            text=args.text or "",
            author=ctx.actor,
            reason="memory_profile edit",
            expected_version=args.expected_version,
        )
    elif args.action == "rollback" and not args.dry_run:
        block = core.rollback(
            space=ctx.space, label=args.block, version=args.version or 0, author=ctx.actor
        )
    elif args.dry_run and args.action == "edit" and args.expected_version != block.version:
        raise Invalid(
            f"expected_version: the block is at version {block.version}, not {args.expected_version}"
        )
    return {
        "block": args.block,
        "version": block.version,
        "text": block.text,
        "tokens": core.tokens(block=block),
        "budget_tokens": block.budget_tokens,
        "history": [
            {
                "version": v.version,
                "author": v.author,
                "reason": v.reason,
                "created_at": v.created_at,
            }
            for v in core.history(block=block, limit=20)
        ],
        "dry_run": args.dry_run,
    }
