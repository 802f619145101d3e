"""python manage.py mcp --space NAME | --key KEY: the MCP server over stdio,
for MCP clients that start Engram as a subprocess (Claude Desktop, Cursor...).
Stdout carries the protocol only."""

from __future__ import annotations

from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.services.scopes import linked_user_space
from memory.services.spaces import authenticate, get_or_create_space
from memory.tools.mcp import serve_stdio
from memory.tools.registry import ToolContext


class Command(BaseCommand):
    help = "Serve the memory tools over MCP on stdio, in one space."

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--space", help="The space to act in (created if missing).")
        who.add_argument("--key", help="An API key; the server acts in its space.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["key"]:
            key = authenticate(options["key"])
            if key is None:
                raise CommandError("missing, unknown or revoked API key")
            ctx = ToolContext(
                space=key.space, actor=f"mcp:{key.prefix}", user_space=linked_user_space(key)
            )
        else:
            space = get_or_create_space(name=options["space"])
            ctx = ToolContext(space=space, actor="mcp:stdio")
        anyio.run(serve_stdio, ctx)
