from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_slug

from memory.models import Space
from memory.services.spaces import SpaceKindError, create_api_key


def _slug(option: str, value: str) -> None:
    try:
        validate_slug(value)
    except ValidationError:
        raise CommandError(
            f"{option} must be a slug: letters, numbers, hyphens, underscores"
        ) from None


class Command(BaseCommand):
    help = "Create an API key for a space (creating the space if needed). Prints only the key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--space", required=True, help="space name (a slug)")
        parser.add_argument("--name", default="", help="a label for the key")
        parser.add_argument(
            "--kind",
            choices=Space.Kind.values,
            default=None,
            help="the space's kind (default: user, or project with --user-space)",
        )
        parser.add_argument(
            "--user-space",
            default=None,
            help="link the key to this user space: reads fuse both, writes take scope",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        _slug("--space", options["space"])
        if options["user_space"]:
            _slug("--user-space", options["user_space"])
        try:
            _, plain = create_api_key(
                space_name=options["space"],
                name=options["name"],
                kind=options["kind"],
                user_space_name=options["user_space"],
            )
        except SpaceKindError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(plain)
