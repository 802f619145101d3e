from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory.services.spaces import create_api_key


class Command(BaseCommand):
    help = "Create an API key for a space (creating the space if needed). Prints only the key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--space", required=True, help="space name (a slug)")
        parser.add_argument("--name", default="", help="a label for the key")

    def handle(self, *args: Any, **options: Any) -> None:
        from django.core.exceptions import ValidationError
        from django.core.validators import validate_slug

        try:
            validate_slug(options["space"])
        except ValidationError:
            from django.core.management.base import CommandError

            raise CommandError(
                "--space must be a slug: letters, numbers, hyphens, underscores"
            ) from None
        _, plain = create_api_key(space_name=options["space"], name=options["name"])
        self.stdout.write(plain)
