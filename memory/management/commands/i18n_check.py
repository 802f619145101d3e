"""Report what the dashboard's catalogues lack: msgids the sources ask for and
the catalogues miss, entries untranslated or fuzzy, placeholders or HTML that
differ from the msgid's, a compiled .mo older than its .po. Needs no gettext
tools; scripts/i18n.sh runs it between makemessages and compilemessages."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from engram_site import i18n


class Command(BaseCommand):
    help = "List what the zh_Hans and ru catalogues lack; exit 1 if anything."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-mo", action="store_true", help="do not compare the compiled .mo files"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        sources = i18n.source_msgids()
        found = []
        for language in i18n.LANGUAGES:
            lines = i18n.problems(language, sources)
            if options["no_mo"]:
                lines = [line for line in lines if "compilemessages" not in line]
            entries = i18n.parse_po(i18n.catalogue_path(language))
            done = sum(1 for e in entries if e.translated)
            self.stdout.write(f"{language}: {done}/{len(entries)} translated")
            for line in lines:
                self.stdout.write(f"  {line}")
            found += lines
        if found:
            raise CommandError(f"{len(found)} problem(s) in the catalogues")
