"""manage.py index_docs PATH [--space NAME] [--prefix P]

Index a folder of project documents (.md .markdown .txt .rst .html .htm)
into a space, incrementally by content hash: unchanged files are skipped,
changed ones re-chunked, files gone from the folder deleted from the index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory.services.documents import index
from memory.services.spaces import get_or_create_space


class Command(BaseCommand):
    help = "Index a folder of documents into a space for recall (type doc)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path")
        parser.add_argument("--space", default="default", help="target space (created if missing)")

    def handle(self, *args: Any, **opts: Any) -> None:
        root = Path(opts["path"]).expanduser()
        if not root.is_dir():
            raise CommandError(f"{root} is not a folder")
        space = get_or_create_space(name=opts["space"])
        found = index.files(root)
        with tqdm(total=len(found), unit="file", desc="index_docs", disable=None) as bar:
            summary = index.index_folder(space=space, root=root, on_file=lambda _: bar.update(1))
        self.stdout.write(
            f"added {summary.added}, changed {summary.changed}, unchanged {summary.unchanged}, "
            f"removed {summary.removed}, chunks {summary.chunks}"
            + (f", quarantined {summary.quarantined}" if summary.quarantined else "")
            + (f", skipped {len(summary.skipped)}" if summary.skipped else "")
        )
