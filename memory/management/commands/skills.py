"""python manage.py skills export|import --space NAME DIR: skills as SKILL.md
folders (one folder per skill). Imported skills stay disabled unless --enable."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.errors import EngramError
from memory.models import Space
from memory.services import skills


class Command(BaseCommand):
    help = "Export or import a space's skills as SKILL.md folders."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["export", "import"])
        parser.add_argument("folder")
        parser.add_argument("--space", required=True)
        parser.add_argument("--enable", action="store_true", help="import: enable new skills")

    def handle(self, *args: Any, **options: Any) -> None:
        space = Space.objects.filter(name=options["space"]).first()
        if space is None:
            raise CommandError(f"no space named {options['space']}")
        try:
            if options["action"] == "export":
                count = skills.export_folder(space=space, folder=options["folder"])
                self.stdout.write(f"exported {count} skill(s) to {options['folder']}")
            else:
                counts = skills.import_folder(
                    space=space, folder=options["folder"], enable=options["enable"]
                )
                self.stdout.write(
                    f"imported {counts['created']} new and {counts['updated']} known skill(s)"
                )
        except EngramError as exc:
            raise CommandError(exc.detail) from exc
