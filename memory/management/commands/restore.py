"""manage.py restore DIR [--force]: put a `manage.py backup` back.

Stop Engram first (the command refuses while `./run` holds the data
directory). The restored row counts are checked against the backup's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from engram_site import runguard
from memory.services import backup


class Command(BaseCommand):
    help = "Restore a backup made by manage.py backup into this instance's database and data dir."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("src", help="the backup directory")
        parser.add_argument(
            "--force", action="store_true", help="replace an existing database and files"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            lock = runguard.acquire(Path(settings.DATA_DIR))
        except runguard.AlreadyRunning as exc:
            raise CommandError(
                f"Engram is running on {settings.DATA_DIR} ({exc.holder or 'another process'}); "
                "stop it before restoring"
            ) from None
        try:
            # The file may be replaced under it: no connection of ours stays open.
            connection.close()
            report = backup.restore(
                Path(options["src"]),
                database=connection.settings_dict,
                data_dir=Path(settings.DATA_DIR),
                force=options["force"],
            )
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from None
        finally:
            lock.release()
        self.stdout.write(
            f"restored {report.engine} from {report.path}: {len(report.counts)} tables, "
            f"{sum(report.counts.values())} rows, all counts equal the backup's; "
            f"integrity {report.integrity}; files {', '.join(report.files) or '-'}"
        )
