"""manage.py backup [DIR]: an online, point-in-time copy of the whole instance.

Safe while Engram runs and takes writes. Restore with `manage.py restore DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from memory.services import backup


class Command(BaseCommand):
    help = (
        "Copy the database (SQLite VACUUM INTO, or pg_dump on an exported snapshot), the "
        "secret key and the mirror into a new directory, with every table's row count."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "dest",
            nargs="?",
            help="a new directory (default: <data dir>/backups/engram-<UTC time>)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        dest = options["dest"] or str(
            Path(settings.DATA_DIR)
            / "backups"
            / f"engram-{timezone.now().strftime('%Y%m%dT%H%M%SZ')}"
        )
        try:
            report = backup.backup(Path(dest))
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from None
        rows = sum(report.counts.values())
        if report.command:
            self.stdout.write(
                f"pg_dump is not on PATH. Row counts and files are in {report.path}; "
                f"take the dump with:\n  {report.command}"
            )
            return
        self.stdout.write(
            f"backup of {report.engine} in {report.path}: {len(report.counts)} tables, "
            f"{rows} rows, integrity {report.integrity}, files {', '.join(report.files) or '-'} "
            f"({report.seconds:.1f} s)"
        )
