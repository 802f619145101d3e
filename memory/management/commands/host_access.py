"""manage.py host_access --space NAME [--allow | --deny]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.models import Space
from memory.services.spaces import set_host_access


class Command(BaseCommand):
    help = (
        "Show or set whether a space's keys may see the server host (GET /environment with "
        "the server host, path and binary checks on it). Off for new spaces but 'default'."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--space", required=True, help="space name")
        choice = parser.add_mutually_exclusive_group()
        choice.add_argument("--allow", action="store_true", help="let the space see the host")
        choice.add_argument("--deny", action="store_true", help="hide the host from the space")

    def handle(self, *args: Any, **options: Any) -> None:
        space = Space.objects.filter(name=options["space"]).first()
        if space is None:
            raise CommandError(f"no space named {options['space']!r}")
        if options["allow"] or options["deny"]:
            set_host_access(space=space, allowed=bool(options["allow"]), actor="manage.py")
        state = "allowed" if space.host_access else "denied"
        self.stdout.write(f"{space.name}: host access {state}")
