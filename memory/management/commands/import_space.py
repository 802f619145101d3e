"""manage.py import_space --space NAME FILE [--graph [--dry-run]]

Without --graph FILE is a JSON export of export_space / GET /api/v1/export;
with --graph it is a {nodes, edges} knowledge-graph dump (Cognee's shape).
Both are idempotent: running the same file again adds nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.errors import EngramError
from memory.services.imports import import_graph, import_space
from memory.services.spaces import get_or_create_space


class Command(BaseCommand):
    help = "Import a JSON space export, or with --graph a {nodes, edges} dump, into a space."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--space", required=True, help="target space (created if missing)")
        parser.add_argument("--graph", action="store_true", help="FILE is a {nodes, edges} dump")
        parser.add_argument(
            "--dry-run", action="store_true", help="with --graph: count, write nothing"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"cannot read {path}: {exc}") from None
        if opts["dry_run"] and not opts["graph"]:
            raise CommandError("--dry-run applies to --graph imports")
        space = get_or_create_space(name=opts["space"])
        try:
            if opts["graph"]:
                report = import_graph(space=space, dump=data, dry_run=opts["dry_run"], actor="cli")
                summary: dict[str, Any] = report.as_dict()
            else:
                summary = import_space(space=space, data=data, actor="cli").as_dict()
        except EngramError as exc:
            raise CommandError(exc.detail) from None
        self.stdout.write(json.dumps(summary, indent=1, sort_keys=True))
