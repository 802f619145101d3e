"""manage.py export_space --space NAME [--format json|markdown] [--redacted] [--out FILE]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.models import Space
from memory.services import export


class Command(BaseCommand):
    help = "Export a whole space as JSON (importable) or Markdown; --redacted masks secrets."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--space", required=True)
        parser.add_argument("--format", choices=("json", "markdown"), default="json")
        parser.add_argument("--redacted", action="store_true")
        parser.add_argument("--out", help="file to write (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        space = Space.objects.filter(name=opts["space"]).first()
        if space is None:
            raise CommandError(f"no space named {opts['space']!r}")
        if opts["format"] == "markdown":
            text = export.export_markdown(space=space, redacted=opts["redacted"])
        else:
            data = export.export_space(space=space, redacted=opts["redacted"])
            text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        if opts["out"]:
            Path(opts["out"]).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {opts['out']}")
        else:
            self.stdout.write(text, ending="")
