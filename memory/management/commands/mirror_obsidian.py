"""manage.py mirror_obsidian --space NAME --out FOLDER [--redacted]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.models import Space
from memory.services.export import mirror_obsidian


class Command(BaseCommand):
    help = (
        "Write an Obsidian/Logseq vault of a space: one Markdown file per live fact "
        "with YAML front matter and [[entity]] links, plus one page per entity."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--space", required=True)
        parser.add_argument("--out", required=True, help="vault folder (created if missing)")
        parser.add_argument("--redacted", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        space = Space.objects.filter(name=opts["space"]).first()
        if space is None:
            raise CommandError(f"no space named {opts['space']!r}")
        counts = mirror_obsidian(space=space, folder=Path(opts["out"]), redacted=opts["redacted"])
        self.stdout.write(
            f"{counts['facts']} fact files, {counts['entities']} entity pages, "
            f"{counts['removed']} stale files removed in {opts['out']}"
        )
