"""The LoCoMo benchmark (locomo10.json) as Engram evaluates it: one module
shared by the eval_locomo, eval_vectors and eval_consolidation commands.

Each conversation goes into its own space through the real ingestion path:
accept_turns with ref = the dialog id ("D1:3"), ts = the session's date, the
speaker's name in metadata["speaker"]. LoCoMo is two people talking, neither
an assistant, so the first speaker is stored as role "user" and the second as
"assistant": that keeps both roles in use the way an agent transcript would
and the name stays in metadata. The write pipeline is drained in-process by
run_job for every pending IngestJob; then every question is asked through
recall(). A question's Recall@k is the share of its evidence refs found in
source.turn_refs of the top-k results (refs deduplicated in rank order); All@10
is 1 when every evidence ref is in the top 10.

With a server's URL (eval_locomo --url) the same happens over the API of a
running Engram: each conversation's turns are posted with POST /turns/batch
(the same ref, ts, role and speaker), the server's own worker runs the
pipeline, and each question is asked with POST /recall (HttpSpace).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import statistics
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from memory.models import Space

KS = (1, 5, 10, 20)
METRICS = [f"r@{k}" for k in KS] + ["mrr", "all@10"]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(),
        start=1,
    )
}


def parse_session_date(text: str) -> datetime:
    m = _DATE.search(text or "")
    if not m:
        raise ValueError(f"unrecognised session date {text!r}")
    hour = int(m[1]) % 12 + (12 if m[3].lower() == "pm" else 0)
    return datetime(int(m[6]), _MONTHS[m[5].lower()], int(m[4]), hour, int(m[2]), tzinfo=UTC)


def parse_range(spec: str, total: int) -> list[int]:
    """ "1-5" or "1,3" → conversation numbers; "" → all of them."""
    if not spec:
        return list(range(1, total + 1))
    chosen: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            chosen.extend(range(int(a), int(b) + 1))
        elif part:
            chosen.append(int(part))
    bad = [c for c in chosen if not 1 <= c <= total]
    if bad:
        raise ValueError(f"--conversations {spec!r}: no conversation {bad[0]} (1..{total})")
    return chosen


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ValueError(f"{path} does not exist")
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


def conversation_turns(c: dict[str, Any]) -> list[tuple[int, datetime, dict[str, Any], str]]:
    """(session number, session date, turn, text) in conversation order. A
    shared photo's caption is part of the text: it is what the other person saw."""
    sessions = sorted(int(key.split("_")[1]) for key in c if re.fullmatch(r"session_\d+", key))
    out = []
    for s in sessions:
        ts = parse_session_date(c[f"session_{s}_date_time"])
        for turn in c[f"session_{s}"]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            out.append((s, ts, turn, text))
    return out


class Bm25Turns:
    """The plain BM25 baseline: one conversation's turns in an in-memory FTS5
    table with the Porter tokenizer (the raw turn text, optionally prefixed
    with who said it), queried with the OR of the query's terms and ranked by
    bm25() alone."""

    def __init__(self, conv: dict[str, Any], *, speaker: bool) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(ref UNINDEXED, text, tokenize='porter')")
        self.db.executemany(
            "INSERT INTO t (ref, text) VALUES (?, ?)",
            [
                (turn["dia_id"], f"{turn['speaker']}: {turn['text']}" if speaker else turn["text"])
                for _, _, turn, _ in conversation_turns(conv["conversation"])
            ],
        )

    def rank(self, query: str, *, k: int) -> list[str]:
        from memory.search import query_terms

        terms = query_terms(query)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self.db.execute(
            "SELECT ref FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        ).fetchall()
        return [r[0] for r in rows]


def ingest(number: int, conv: dict[str, Any], *, reuse: bool = False) -> Space:
    """The conversation's space, ingested and drained (or found, with reuse)."""
    from memory.models import IngestJob, Turn
    from memory.services.pipeline import run_job
    from memory.services.turns import TurnData, accept_turns

    c = conv["conversation"]
    first = c["speaker_a"]
    digest = hashlib.sha256(json.dumps(c, sort_keys=True).encode()).hexdigest()[:12]
    if reuse:
        name = f"locomo-{number}-{digest}"
        space = Space.objects.filter(name=name).first()
        if (
            space is not None
            and Turn.objects.filter(space=space).exists()
            and not IngestJob.objects.filter(space=space, status="pending").exists()
        ):
            return space
        if space is None:
            space = Space.objects.create(name=name)
    else:
        space = Space.objects.create(name=f"locomo-{number}-{int(time.time() * 1000)}")
    batch = [
        TurnData(
            session_id=f"session-{s}",
            role="user" if turn["speaker"] == first else "assistant",
            text=text,
            ts=ts,
            ref=turn["dia_id"],
            metadata={"speaker": turn["speaker"]},
        )
        for s, ts, turn, text in conversation_turns(c)
    ]
    for i in range(0, len(batch), 500):
        accept_turns(space=space, turns=batch[i : i + 500])
    pending = list(
        IngestJob.objects.filter(space=space, status="pending")
        .order_by("id")
        .values_list("id", flat=True)
    )
    for job_id in tqdm(pending, desc=f"conv {number} pipeline", leave=False):
        run_job(job_id)
    return space


class HttpSpace:
    """One conversation's space on a running server, asked over its API.
    `took_ms` of a question is the whole HTTP round trip."""

    def __init__(self, url: str, key: str, space_id: int) -> None:
        import logging

        import httpx

        logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise
        self.space_id = space_id
        self.http = httpx.Client(
            base_url=url.rstrip("/") + "/api/v1",
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )

    def call(self, method: str, path: str, **kw: Any) -> Any:
        # A running server keeps its per-key rate limit: wait as it asks.
        while True:
            response = self.http.request(method, path, **kw)
            if response.status_code != 429:
                response.raise_for_status()
                return response.json()
            time.sleep(float(response.headers.get("Retry-After", "1")))

    def refs(self, query: str, *, k: int) -> tuple[list[str], float]:
        started = time.perf_counter()
        answer = self.call("POST", "/recall", json={"query": query, "k": k})
        took_ms = (time.perf_counter() - started) * 1000
        refs: list[str] = []
        for result in answer["results"]:
            for ref in result["source"]["turn_refs"]:
                if ref not in refs:
                    refs.append(ref)
        return refs, took_ms

    def pending(self) -> int:
        return int(self.call("GET", "/status")["pending_jobs"])


def post(number: int, conv: dict[str, Any], *, url: str) -> HttpSpace:
    """A new space and key for the conversation, its turns posted to the
    server at `url` (which must use this process's database, where the key
    is made). The server's worker processes them; see drain()."""
    from memory.services.spaces import create_api_key

    c = conv["conversation"]
    first = c["speaker_a"]
    key, plain = create_api_key(space_name=f"locomo-{number}-http-{int(time.time() * 1000)}")
    space = HttpSpace(url, plain, key.space_id)
    turns = [
        {
            "session_id": f"session-{s}",
            "role": "user" if turn["speaker"] == first else "assistant",
            "text": text,
            "ts": ts.isoformat(),
            "ref": turn["dia_id"],
            "metadata": {"speaker": turn["speaker"]},
        }
        for s, ts, turn, text in conversation_turns(c)
    ]
    for i in range(0, len(turns), 500):
        space.call("POST", "/turns/batch", json={"turns": turns[i : i + 500]})
    return space


def drain(spaces: list[HttpSpace], *, timeout: float = 1800) -> None:
    """Wait until the server's worker has processed every posted turn."""
    deadline = time.monotonic() + timeout
    with tqdm(desc="server pipeline", unit="turn") as bar:
        first = None
        while True:
            left = sum(s.pending() for s in spaces)
            first = left if first is None else first
            bar.total = first
            bar.n = first - left
            bar.refresh()
            if left == 0:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{left} turns still pending after {timeout:.0f} s")
            time.sleep(1)


def ask(
    number: int, conv: dict[str, Any], space: Space | Bm25Turns | HttpSpace, *, k: int
) -> list[dict[str, Any]]:
    """One row per question with evidence: its Recall@k, All@10, MRR and latency."""
    from memory.services.recall import recall
    from memory.services.relevance import content_words

    c = conv["conversation"]
    texts = {turn["dia_id"]: text for _, _, turn, text in conversation_turns(c)}
    names = content_words(f"{c['speaker_a']} {c['speaker_b']}")
    out = []
    for qa in tqdm(conv["qa"], desc=f"conv {number} questions", leave=False):
        evidence = {e.strip() for e in qa.get("evidence", []) for e in e.split(";") if e.strip()}
        if not evidence:
            continue
        refs: list[str] = []
        if isinstance(space, Bm25Turns):
            started = time.perf_counter()
            refs = space.rank(qa["question"], k=k)
            took_ms = (time.perf_counter() - started) * 1000
        elif isinstance(space, HttpSpace):
            refs, took_ms = space.refs(qa["question"], k=k)
        else:
            response = recall(space=space, query=qa["question"], k=k)
            took_ms = response.took_ms
            for result in response.results:
                for ref in result.source.turn_refs:
                    if ref not in refs:
                        refs.append(ref)
        row: dict[str, Any] = {
            "conv": number,
            "category": qa["category"],
            "ms": took_ms,
            "question": qa["question"],
            "evidence": sorted(evidence),
            "found": refs[:20],
        }
        for cutoff in KS:
            row[f"r@{cutoff}"] = len(evidence & set(refs[:cutoff])) / len(evidence)
        row["all@10"] = float(evidence <= set(refs[:10]))
        rank = next((i for i, ref in enumerate(refs, 1) if ref in evidence), None)
        row["mrr"] = 1.0 / rank if rank else 0.0
        # Where each evidence turn ranked among the k asked for (None: not
        # among them), for depth_table.
        row["ranks"] = {e: refs.index(e) + 1 if e in refs[:k] else None for e in sorted(evidence)}
        # Whether each evidence turn holds a word of the question, for
        # depth_table (a ref naming no turn holds none).
        asked = content_words(qa["question"]) - names
        row["shares"] = {e: bool(asked & content_words(texts.get(e, ""))) for e in sorted(evidence)}
        out.append(row)
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean of every metric per scope: conversations 1-5, 6-10 and all, per
    category and overall over categories 1-4 (category 5 apart)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        for s in (f"conv {'1-5' if r['conv'] <= 5 else '6-10'}", "all"):
            groups[f"{s} | cat {r['category']} {CATEGORIES[r['category']]}"].append(r)
            if r["category"] != 5:
                groups[f"{s} | overall 1-4"].append(r)
    return {
        name: {m: statistics.fmean(r[m] for r in subset) for m in METRICS} | {"n": len(subset)}
        for name, subset in sorted(groups.items())
    }


def table(figures: dict[str, dict[str, float]]) -> list[str]:
    lines = [f"{'scope':<38}" + "".join(f"{m:>8}" for m in METRICS) + f"{'n':>6}"]
    for name, f in figures.items():
        lines.append(
            f"{name:<38}" + "".join(f"{f[m]:>8.3f}" for m in METRICS) + f"{int(f['n']):>6}"
        )
    return lines


# Rank bands of depth_table: the top 10 the figures count, then how much
# deeper the rest sits.
BANDS = ((1, 10), (11, 20), (21, 40), (41, 100), (101, 200))


def depth_table(rows: list[dict[str, Any]], *, k: int) -> list[str]:
    """Where the evidence turns ranked among the k results asked for, per
    category over all conversations asked: the share in each band up to k,
    and the share not among the k at all. What sits in 11..k a re-ranking
    could still lift into the top 10; what is not among the k needs a
    candidate that keyword search never proposed. The last column is the
    share not among the k that holds no word of the question, the speakers'
    names aside (ask's "shares"): no keyword search proposes those, only a
    link from something it does find, or meaning."""
    bands = [(lo, min(hi, k)) for lo, hi in BANDS if lo <= k]
    labels = [f"{lo}-{hi}" for lo, hi in bands] + [f"not in {k}", "no word"]
    groups: dict[str, list[tuple[int | None, bool]]] = defaultdict(list)
    for r in rows:
        shares = r.get("shares", {})
        ranked = [(rank, shares.get(ref, True)) for ref, rank in r["ranks"].items()]
        groups[f"cat {r['category']} {CATEGORIES[r['category']]}"] += ranked
        if r["category"] != 5:
            groups["overall 1-4"] += ranked
    lines = [f"{'evidence turns ranked':<26}" + "".join(f"{b:>11}" for b in labels) + f"{'n':>6}"]
    for name, ranked in sorted(groups.items()):
        ranks = [rank for rank, _ in ranked]
        counts = [sum(1 for x in ranks if x is not None and lo <= x <= hi) for lo, hi in bands]
        counts.append(sum(1 for x in ranks if x is None))
        counts.append(sum(1 for x, shares in ranked if x is None and not shares))
        lines.append(
            f"{name:<26}" + "".join(f"{c / len(ranks):>11.3f}" for c in counts) + f"{len(ranks):>6}"
        )
    return lines


def latency_line(rows: list[dict[str, Any]]) -> str:
    latencies = sorted(r["ms"] for r in rows)
    if not latencies:
        return "recall latency: no questions"
    return (
        f"recall latency: p50 {latencies[len(latencies) // 2]:.1f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms over {len(latencies)} questions"
    )


CHARTS_HINT = (
    "charts need matplotlib, from the optional extra 'charts': "
    "pip install '.[charts]' in the Engram checkout (or pip install matplotlib)"
)


class ChartsUnavailable(Exception):
    """matplotlib is not installed."""


def charts_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def chart(figures: dict[str, Any], out: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        raise ChartsUnavailable(CHARTS_HINT) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, f in figures.items():
        if not name.startswith("all |"):
            continue
        ax.plot(KS, [f[f"r@{k}"] for k in KS], marker="o", label=name.removeprefix("all | "))
    ax.set_xlabel("k")
    ax.set_ylabel("Recall@k")
    ax.set_xticks(KS)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title("Engram recall on LoCoMo (evidence turns in top k)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
