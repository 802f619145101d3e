"""Benchmark the configured embeddings backend and the vector search.

    python manage.py bench_embed [--items 10000] [--search-items 100000] [--queries 200]

Prints three figures:
- embedding throughput: `--items` synthetic fact sentences embedded in
  batches and stored through the same path as the pipeline (reembed_pending);
- query embedding latency, cold and through the query cache;
- vector search latency (p50/p95) over a space holding `--search-items`
  vectors, including loading the matrix cache once and resolving hits
  against their rows.

It writes into a throwaway space that is deleted at the end, so run it on a
scratch database (ENGRAM_DATA_DIR pointing at an empty directory)."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory import embeddings
from memory.embeddings import EmbeddingsUnavailable
from memory.models import MemoryItem, MemoryVector, Space
from memory.search import vectors

_SUBJECTS = "Anna Bob Chen Dana Eli Farah Gus Hana Ivan Jo Kai Lena Milo Nora Omar Pia".split()
_VERBS = "likes visited bought fixed learned planned painted cooked read booked".split()
_THINGS = (
    "a red bicycle|the museum in Lisbon|sourdough bread|a vintage camera|Spanish lessons|"
    "a trip to Kyoto|the garden fence|a jazz record|a chess set|running shoes|a yoga class|"
    "the new laptop|a birthday cake|tickets for the concert|a book about whales"
).split("|")
_WHEN = "yesterday|last week|in May|on Sunday|two years ago|this morning|after work".split("|")


def _sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_THINGS)} "
        f"{rng.choice(_WHEN)} (note {i})"
        for i in range(n)
    ]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


class Command(BaseCommand):
    help = "Measure embedding throughput, query latency and vector search latency."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=10_000)
        parser.add_argument("--search-items", type=int, default=100_000)
        parser.add_argument("--queries", type=int, default=200)

    def handle(self, *args: object, **opts: Any) -> None:
        if not embeddings.enabled():
            raise CommandError("set ENGRAM_EMBEDDINGS to a backend to benchmark it")
        n_items = int(opts["items"])
        n_search = max(int(opts["search_items"]), n_items)
        n_queries = int(opts["queries"])
        model = embeddings.model_name()
        space = Space.objects.create(name=f"bench-embed-{int(time.time() * 1000)}")
        try:
            self._run(space, model, n_items, n_search, n_queries)
        except EmbeddingsUnavailable as exc:
            raise CommandError(str(exc)) from exc
        finally:
            MemoryVector.objects.filter(space=space).delete()
            MemoryItem.objects.filter(space=space).delete()
            space.delete()

    def _run(self, space: Space, model: str, n_items: int, n_search: int, n_queries: int) -> None:
        self.stdout.write(f"backend {model}")
        texts = _sentences(n_search, seed=7)
        for i in tqdm(range(0, n_search, 5000), desc="creating items", file=self.stderr):
            MemoryItem.objects.bulk_create(
                [MemoryItem(space=space, text=t) for t in texts[i : i + 5000]]
            )

        # 1. throughput through the storing path, on the first n_items rows
        started = time.perf_counter()
        with tqdm(total=n_items, desc="embedding", unit="item", file=self.stderr) as bar:
            done = embeddings.reembed_pending(space_id=space.pk, limit=n_items, on_batch=bar.update)
        took = time.perf_counter() - started
        self.stdout.write(
            f"embedded and stored {done} items in {took:.2f}s ({done / took:.0f} items/s)"
        )

        # The remaining rows get vectors by the same model through a direct
        # bulk insert, so the search figure covers n_search rows without
        # spending minutes on a slow HTTP backend.
        rest = n_search - n_items
        if rest:
            ids = list(
                MemoryItem.objects.filter(space=space)
                .exclude(vectors__model=model)
                .order_by("pk")
                .values_list("pk", "text")
            )
            for i in tqdm(range(0, len(ids), 5000), desc="vectors for search", file=self.stderr):
                chunk = ids[i : i + 5000]
                vecs = embeddings.embed_texts([t for _, t in chunk])
                MemoryVector.objects.bulk_create(
                    [
                        MemoryVector(
                            space=space,
                            item_id=pk,
                            model=model,
                            dim=int(vecs.shape[1]),
                            vec=embeddings.to_blob(v),
                        )
                        for (pk, _), v in zip(chunk, vecs, strict=True)
                    ]
                )

        # 2. query embedding, cold then cached
        queries = [f"what did {s} {v} recently" for s in _SUBJECTS for v in _VERBS][:n_queries]
        embeddings.query_cache.clear()
        cold = []
        for q in queries:
            t = time.perf_counter()
            embeddings.embed_query(q)
            cold.append((time.perf_counter() - t) * 1000)
        warm = []
        for q in queries:
            t = time.perf_counter()
            embeddings.embed_query(q)
            warm.append((time.perf_counter() - t) * 1000)
        self.stdout.write(
            f"query embedding: cold p50 {statistics.median(cold):.2f} ms p95 {_pct(cold, 0.95):.2f} ms; "
            f"cached p50 {statistics.median(warm):.3f} ms"
        )

        # 3. search over n_search vectors
        vectors.clear_cache()
        t = time.perf_counter()
        vectors.search(space_id=space.pk, query=queries[0], limit=10)
        first = (time.perf_counter() - t) * 1000
        lat = []
        for q in queries:
            t = time.perf_counter()
            hits = vectors.search(space_id=space.pk, query=q, limit=10)
            lat.append((time.perf_counter() - t) * 1000)
        if not hits:
            raise CommandError("vector search returned nothing over a filled space")
        self.stdout.write(
            f"vector search over {n_search} items: first call (matrix load) {first:.0f} ms; "
            f"then p50 {statistics.median(lat):.1f} ms p95 {_pct(lat, 0.95):.1f} ms "
            f"(k=10, {len(lat)} queries; matrix {np.dtype(np.float32).itemsize * n_search * vectors._cache[(space.pk, model)].dim / 1e6:.0f} MB)"
        )
