"""Embed every item, turn and summary that has no vector for the configured
model: after turning embeddings on, after switching models, or to catch up
rows written while the backend was down.

Each batch is committed on its own and only rows without a vector are picked
up, so an interrupted run loses at most one batch and the next run carries on
where it stopped."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory import embeddings
from memory.embeddings import DimensionMismatch, EmbeddingsUnavailable
from memory.models import MemoryVector, Space


class Command(BaseCommand):
    help = "Embed rows missing a vector for the configured embeddings model (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--space", help="only this space (name); default every space")
        parser.add_argument(
            "--limit", type=int, default=0, help="stop after this many rows (0: all)"
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="delete vectors stored under the configured model name with another "
            "dimension (the way out of EMBEDDER_DIMENSION_MISMATCH), then re-embed",
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help="after embedding, delete vectors of other models (frees space after a switch)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: object, **opts: Any) -> None:
        if not embeddings.enabled():
            raise CommandError("ENGRAM_EMBEDDINGS=none: nothing to embed")
        spaces = Space.objects.order_by("id")
        if opts["space"]:
            spaces = spaces.filter(name=opts["space"])
            if not spaces.exists():
                raise CommandError(f"no space named {opts['space']!r}")
        try:
            model = embeddings.model_name()
            # One probe tells the current dimension before anything is written.
            dim = int(embeddings.embed_texts(["dimension probe"]).shape[1])
        except EmbeddingsUnavailable as exc:
            raise CommandError(str(exc)) from exc
        stored = embeddings.stored_dimension(model)
        if stored is not None and stored != dim:
            if not opts["force"]:
                raise CommandError(
                    str(DimensionMismatch(model=model, stored=stored, configured=dim))
                )
            # The dimension is one per model name across spaces, so --force
            # clears the stale vectors everywhere, not only in --space.
            removed = embeddings.delete_mismatched(model=model, dim=dim)
            self.stdout.write(f"deleted {removed} vectors of dimension {stored} for {model}")

        other = MemoryVector.objects.exclude(model=model).filter(space__in=spaces).count()
        if other:
            self.stdout.write(
                f"{other} vectors belong to other models and are kept "
                f"({'pruned at the end' if opts['prune'] else 'use --prune to delete them'})"
            )
        pending = {s.id: embeddings.pending_count(space_id=s.id) for s in spaces}
        total = sum(pending.values())
        limit = int(opts["limit"] or 0) or total
        self.stdout.write(f"model {model} ({dim}d): {total} rows to embed")
        done = 0
        with tqdm(
            total=min(total, limit),
            unit="row",
            desc="embedding",
            disable=bool(opts["no_progress"]),
            file=self.stderr,
        ) as bar:

            def on_batch(n: int) -> None:
                nonlocal done
                done += n
                bar.update(n)

            for space in spaces:
                if not pending[space.id] or done >= limit:
                    continue
                try:
                    embeddings.reembed_pending(
                        space_id=space.id, limit=limit - done, on_batch=on_batch
                    )
                except EmbeddingsUnavailable as exc:
                    raise CommandError(
                        f"stopped after {done} rows: {exc}. Run the command again to resume."
                    ) from exc
        if opts["prune"]:
            removed = embeddings.delete_other_models(
                model=model, space_id=None if not opts["space"] else spaces[0].id
            )
            self.stdout.write(f"pruned {removed} vectors of other models")
        self.stdout.write(f"embedded {done} rows with {model}")
