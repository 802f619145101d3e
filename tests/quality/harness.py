"""Runs a memory-quality scenario through the HTTP API against a real worker.

One stack serves the whole suite: a private redis-server and a Celery worker
per extractor ("rules": no LLM provider; "llm": the fake OpenAI-format server
answering like a good LLM), both on the pytest test database. Every scenario
run gets its own space and API key, so runs are isolated while sharing the
workers. The worker runs with concurrency 1: the turns of a session are
processed in the order they were posted, as one worker does in production."""

from __future__ import annotations

import json
import re
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kombu.pools
from django.test import Client

from engram_site.celery import app
from memory.services.spaces import create_api_key
from tests.fakes.good_llm import GoodLLM
from tests.fakes.llm_server import FakeLLM
from tests.integration import workers
from tests.quality import dsl
from tests.quality.dsl import Scenario

EXTRACTORS = ("rules", "llm")
WAIT_TIMEOUT = 30.0
POLL = 0.02


class ScenarioFailure(AssertionError):
    pass


@dataclass
class Lane:
    """One extractor's redis + worker."""

    name: str
    redis: workers.Redis
    worker: workers.Proc
    log: Path


@dataclass
class Stack:
    llm: FakeLLM
    good: GoodLLM
    lanes: dict[str, Lane]
    # (scenario name, extractor) -> the run, for the suite-wide context check
    runs: dict[tuple[str, str], Run] = field(default_factory=dict)

    def log_tail(self, extractor: str, chars: int = 3000) -> str:
        try:
            return self.lanes[extractor].log.read_text()[-chars:]
        except OSError:
            return ""


def start_stack(tmp: Path, good: GoodLLM, exit_stack: ExitStack) -> Stack:
    fake = FakeLLM(responder=good).start()
    exit_stack.callback(fake.stop)
    lanes: dict[str, Lane] = {}
    for name in EXTRACTORS:
        redis = workers.Redis(
            workers.free_port(6400 if name == "rules" else 6450), tmp / f"redis-{name}.log"
        )
        redis.start()
        exit_stack.callback(redis.kill)
        extra = {"ENGRAM_LLM_BUDGET_PER_HOUR": "1000"}
        if name == "llm":
            extra["ENGRAM_LLM_PROVIDERS"] = json.dumps([fake.provider()])
            extra["ENGRAM_LLM_TIMEOUT"] = "10"
        env = workers.celery_env(redis_url=redis.url, extra=extra)
        log = tmp / f"worker-{name}.log"
        proc = workers.worker(env, log, concurrency=1, name=f"quality-{name}").start()
        exit_stack.callback(proc.stop)
        lanes[name] = Lane(name, redis, proc, log)
    return Stack(llm=fake, good=good, lanes=lanes)


# --- a run ------------------------------------------------------------------------------------


def _ts(value: str) -> str:
    return value if "T" in value else f"{value}T10:00:00Z"


def _day(value: Any) -> str | None:
    """The UTC day of an API datetime string."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).date().isoformat()


def _days(expected: dsl.Day) -> tuple[str, ...]:
    if isinstance(expected, str):
        expected = (expected,)
    today = datetime.now(UTC).date().isoformat()
    return tuple(today if d == "TODAY" else d for d in expected)


def _fold(text: str) -> str:
    return " ".join(str(text).casefold().split())


def _has_word(haystack: str, needle: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(_fold(needle))}(?!\w)", _fold(haystack)) is not None


@dataclass
class Run:
    scenario: Scenario
    extractor: str
    stack: Stack
    space: str = ""
    client: Client = field(default=None)  # type: ignore[assignment]
    marks: dict[str, str] = field(default_factory=dict)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    failures: list[str] = field(default_factory=list)
    stale_seen: int = 0

    # -- driving ----------------------------------------------------------------------

    def setup(self) -> None:
        self.space = f"quality-{self.extractor}-{self.scenario.name}-{uuid.uuid4().hex[:6]}"
        _, key = create_api_key(space_name=self.space)
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def get(self, path: str, **params: Any) -> Any:
        clean = {k: v for k, v in params.items() if v is not None}
        response = self.client.get(f"/api/v1{path}", clean)
        if response.status_code != 200:
            raise ScenarioFailure(
                f"GET {path} {clean} -> {response.status_code}: {response.content[:500]!r}"
            )
        return response.json()

    def post(self, path: str, body: dict[str, Any], *, expect: int = 200) -> Any:
        response = self.client.post(f"/api/v1{path}", body, content_type="application/json")
        if response.status_code != expect:
            raise ScenarioFailure(
                f"POST {path} -> {response.status_code}: {response.content[:500]!r}"
            )
        return response.json()

    def wait(self) -> None:
        deadline = time.monotonic() + WAIT_TIMEOUT
        poll = POLL
        while True:
            status = self.get("/status")
            if status["pending_jobs"] == 0:
                if status["dead_jobs"]:
                    raise ScenarioFailure(
                        f"{status['dead_jobs']} ingest job(s) dead-lettered\n"
                        + self.stack.log_tail(self.extractor)
                    )
                return
            if time.monotonic() > deadline:
                raise ScenarioFailure(
                    f"jobs still pending after {WAIT_TIMEOUT}s\n"
                    + self.stack.log_tail(self.extractor)
                )
            time.sleep(poll)
            # back off: the fake LLM answers from this process, so a tight
            # poll loop would compete with it for the interpreter
            poll = min(poll * 1.5, 0.1)

    def mark(self, name: str) -> None:
        time.sleep(0.02)  # the instant falls strictly between writes
        self.marks[name] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        time.sleep(0.02)

    def instant(self, value: str | None) -> str | None:
        if value is None:
            return None
        if value in self.marks:
            return self.marks[value]
        if re.fullmatch(r"T\d+", value):
            raise ScenarioFailure(f"no mark {value}")
        return value

    def play(self, *, checks: bool = True) -> None:
        """Run the steps; with checks=False only write (for the truth check)."""
        self.setup()
        self.mark("T0")
        pending: list[dsl.Say] = []
        dirty = False

        def flush() -> None:
            nonlocal dirty
            if pending:
                self.post(
                    "/turns/batch",
                    {
                        "turns": [
                            {
                                "session_id": t.session,
                                "role": t.role,
                                "text": t.text,
                                "ts": _ts(t.ts),
                            }
                            for t in pending
                        ]
                    },
                    expect=202,
                )
                pending.clear()
                dirty = True

        for step in self.scenario.steps:
            if isinstance(step, dsl.Say):
                if pending and pending[-1].session != step.session:
                    # One batch per session. The single worker takes jobs in
                    # the order they were sent, so a session is processed
                    # before the next one starts without waiting here.
                    flush()
                pending.append(step)
                continue
            flush()
            if dirty:
                self.wait()
                dirty = False
            if isinstance(step, dsl.Mark):
                self.mark(step.name)
            elif isinstance(step, dsl.Write):
                body: dict[str, Any] = {
                    "text": step.text,
                    "subject": step.subject,
                    "predicate": step.predicate,
                    "object": step.object,
                    "importance": step.importance,
                }
                if step.valid_from:
                    body["valid_from"] = step.valid_from
                self.post("/memory/facts", body)
            elif checks:
                try:
                    getattr(self, f"check_{type(step).__name__.lower()}")(step)
                except ScenarioFailure as exc:
                    self.failures.append(f"{_describe(step)}: {exc}")
        flush()
        if dirty:
            self.wait()

    def fail(self, message: str) -> None:
        raise ScenarioFailure(message)

    def extractors_used(self) -> set[str]:
        """Which extractor the worker ran on this space's turns (a harness
        precondition, read from the job rows: no API exposes it)."""
        from memory.models import IngestJob

        results = IngestJob.objects.filter(space__name=self.space).values_list("result", flat=True)
        return {r["extractor"] for r in results if r and r.get("extractor")}

    def dump(self) -> str:
        """The space's fact rows and job results, to read next to a failure
        (diagnostics only: every check goes through the HTTP API)."""
        from memory.models import IngestJob, MemoryItem

        rows = MemoryItem.objects.filter(space__name=self.space).order_by("pk")
        lines = [
            f"  item {i.pk}: {i.subject}|{i.predicate}|{i.object} [{i.status}] "
            f"valid {_day(i.valid_from)}..{_day(i.valid_to)} expired={i.expired_at is not None} "
            f"superseded_by={i.superseded_id if hasattr(i, 'superseded_id') else i.superseded_by_id} "
            f"{i.text!r}"
            for i in rows
        ]
        for job in IngestJob.objects.filter(space__name=self.space).order_by("pk"):
            lines.append(f"  job {job.pk} {job.status}: {json.dumps(job.result)[:300]}")
        return "\n".join(lines)

    # -- checks -------------------------------------------------------------------------

    def facts(self, **params: Any) -> list[dict[str, Any]]:
        answer = self.get("/memory/facts", **params)
        if not isinstance(answer, dict) or not isinstance(answer.get("facts"), list):
            self.fail(f"unexpected answer {str(answer)[:300]}")
        return answer["facts"]

    def check_facts(self, c: dsl.Facts) -> None:
        got = self.facts(
            subject=c.subject,
            predicate=c.predicate,
            as_of=self.instant(c.as_of),
            known_at=self.instant(c.known_at),
        )
        objects = sorted(_fold(f["object"]) for f in got)
        want = sorted(_fold(o) for o in c.objects)
        if objects != want:
            self.fail(f"objects {objects}, want {want}; facts: {_brief(got)}")
        for f in got:
            if f.get("current") is not True:
                self.fail(f"answered fact is not current: {_brief([f])}")
            if c.answer_subject is not None and f.get("subject") != c.answer_subject:
                self.fail(f"subject {f.get('subject')!r}, want {c.answer_subject!r}: {_brief([f])}")
        for obj, day in c.since.items():
            hits = [f for f in got if _fold(f["object"]) == _fold(obj)]
            if len(hits) != 1:
                self.fail(f"{obj}: {len(hits)} current facts, want one")
            f = hits[0]
            if _day(f["valid_from"]) not in _days(day):
                self.fail(f"{obj}: valid_from {f['valid_from']}, want {day}")

    def check_chain(self, c: dsl.Chain) -> None:
        got = self.facts(
            subject=c.subject,
            predicate=c.predicate,
            include_history="true",
            known_at=self.instant(c.known_at),
        )
        shape = [(f["object"], _day(f["valid_from"]), _day(f["valid_to"])) for f in got]
        want = [(w.object, w.since, w.until) for w in c.windows]
        ok = len(got) == len(c.windows) and all(
            _fold(f["object"]) == _fold(w.object)
            and _day(f["valid_from"]) in _days(w.since)
            and (
                f["valid_to"] is None if w.until is None else _day(f["valid_to"]) in _days(w.until)
            )
            for f, w in zip(got, c.windows, strict=False)
        )
        if not ok:
            self.fail(f"chain {shape}, want {want}")
        for i, (f, w) in enumerate(zip(got, c.windows, strict=True)):
            if f.get("current") is not (w.until is None):
                self.fail(f"{w.object}: current={f.get('current')}, want {w.until is None}")
            if c.known_at is None:
                if _parse(f["created_at"]) < self.started:
                    self.fail(f"{w.object}: created_at {f['created_at']} is before the run began")
                if w.until is None and f.get("expired_at") is not None:
                    self.fail(f"{w.object}: current but expired_at {f['expired_at']}")
                if w.until is not None and f.get("expired_at") is None:
                    self.fail(f"{w.object}: ended but expired_at is null")
            if i > 0 and w.until is not None and w.until == c.windows[i - 1].since:
                newer = got[i - 1]
                if _day(f["valid_to"]) != _day(newer["valid_from"]):
                    self.fail(
                        f"{w.object} ends {f['valid_to']} but {newer['object']} begins {newer['valid_from']}"
                    )
                if c.known_at is None and str(f.get("superseded_by")) != str(newer["id"]):
                    self.fail(
                        f"{w.object}: superseded_by {f.get('superseded_by')!r}, want {newer['id']!r}"
                    )

    def recall(self, c: dsl.Recall) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"query": c.query, "k": c.k}
        if c.include_history:
            body["include_history"] = True
        if c.as_of:
            body["as_of"] = self.instant(c.as_of)
        if c.known_at:
            body["known_at"] = self.instant(c.known_at)
        if c.types:
            body["types"] = list(c.types)
        return self.post(c.path, body)["results"]

    def check_recall(self, c: dsl.Recall) -> None:
        results = self.recall(c)
        facts = [r for r in results if r["type"] in ("fact", "insight")]
        turns = [r for r in results if r["type"] == "turn"]
        brief = [
            (r["type"], r["text"][:60], r.get("current"), r.get("superseded_by")) for r in results
        ]
        for r in results:
            if r.get("space") != self.space:
                self.fail(f"result space {r.get('space')!r}, want {self.space!r}")
            if r["type"] in ("fact", "insight") and not isinstance(r.get("current"), bool):
                self.fail(f"fact result without a boolean current: {brief}")
            if r["type"] in ("turn", "summary") and r.get("current") is not None:
                self.fail(f"{r['type']} result with current={r.get('current')!r}")
        if not (c.include_history or c.as_of or c.known_at):
            if any(r["current"] is not True for r in facts):
                self.fail(f"a non-current fact without include_history: {brief}")
        for s in c.current:
            if not any(_fold(s) in _fold(r["text"]) and r["current"] is True for r in facts):
                self.fail(f"no current fact with {s!r}: {brief}")
        for s in c.stale:
            hits = [r for r in facts if _fold(s) in _fold(r["text"])]
            if any(r["current"] is not False for r in hits):
                self.fail(f"a fact with {s!r} is current: {brief}")
            if c.include_history and not hits:
                self.fail(f"include_history: no fact with {s!r}: {brief}")
        for old, new in c.replaced:
            o = [r for r in facts if _fold(old) in _fold(r["text"])]
            n = [r for r in facts if _fold(new) in _fold(r["text"]) and r["current"]]
            if not o or not n:
                self.fail(f"replaced {old!r}->{new!r}: missing results {brief}")
            if str(o[0].get("superseded_by")) != str(n[0]["id"]):
                self.fail(
                    f"{old!r} superseded_by {o[0].get('superseded_by')!r}, want {n[0]['id']!r}"
                )
        for s in c.stale_turns:
            hits = [r for r in turns if _fold(s) in _fold(r["text"])]
            if not hits or any(not r.get("superseded_by") for r in hits):
                self.fail(f"turn with {s!r} not marked superseded: {brief}")
        for s in c.fresh_turns:
            hits = [r for r in turns if _fold(s) in _fold(r["text"])]
            if not hits or any(r.get("superseded_by") for r in hits):
                self.fail(f"turn with {s!r} missing or marked superseded: {brief}")
        for higher, lower in c.above:
            hi = next((i for i, r in enumerate(results) if _fold(higher) in _fold(r["text"])), None)
            lo = next((i for i, r in enumerate(results) if _fold(lower) in _fold(r["text"])), None)
            if hi is None or lo is None or hi > lo:
                self.fail(
                    f"{higher!r} (rank {hi}) should rank above {lower!r} (rank {lo}): {brief}"
                )
        for s in c.absent:
            if any(_fold(s) in _fold(r["text"]) for r in results):
                self.fail(f"{s!r} should not be returned: {brief}")
        if c.graded:
            scores = {round(float(r["score"]), 6) for r in facts}
            if len(facts) < 2 or len(scores) < 2:
                self.fail(
                    f"fact scores not graded: {[(r['text'][:40], r['score']) for r in facts]}"
                )

    def context(self, query: str, *, as_of: str | None = None, known_at: str | None = None) -> str:
        answer = self.get(
            "/context", query=query, as_of=self.instant(as_of), known_at=self.instant(known_at)
        )
        return answer["blocks"]["recalled"]

    def check_context(self, c: dsl.Context) -> None:
        recalled = self.context(c.query, as_of=c.as_of, known_at=c.known_at)
        items = context_items(recalled)
        if not _ordered(items):
            self.fail(f"not current facts, then episodes, then history:\n{recalled}")
        if c.empty and recalled.strip():
            self.fail(f"recalled block should be empty:\n{recalled}")
        for s in c.current:
            if not any(kind == "current" and _has_word(line, s) for kind, line in items):
                self.fail(f"no current line with {s!r}:\n{recalled}")
        for s in c.not_current:
            bad = [line for kind, line in items if kind == "current" and _has_word(line, s)]
            if bad:
                self.fail(f"{s!r} presented as current: {bad}\n{recalled}")
        for s in c.absent:
            if _has_word(recalled, s):
                self.fail(f"{s!r} should not appear:\n{recalled}")
        for s, day in c.history:
            if not any(
                kind == "history" and _has_word(line, s) and f"until {day}" in line
                for kind, line in items
            ):
                self.fail(f"no 'formerly (until {day})' line with {s!r}:\n{recalled}")
        for s in c.no_line:
            bad = [line for _, line in items if _own_text(line).startswith(_fold(s))]
            if bad:
                self.fail(f"{s!r} is an entry of its own: {bad}\n{recalled}")

    def check_core(self, c: dsl.Core) -> None:
        text = self.get("/core/user")["text"]
        for s in c.has:
            if _fold(s) not in _fold(text):
                self.fail(f"core/user lacks {s!r}: {text!r}")
        for s in c.lacks:
            if _has_word(text, s):
                self.fail(f"core/user still says {s!r}: {text!r}")

    def check_nofacts(self, c: dsl.NoFacts) -> None:
        got = self.facts(include_history="true")
        if got:
            self.fail(f"facts were written: {_brief(got)}")
        status = self.get("/status")
        if status["facts"]:
            self.fail(f"/status counts {status['facts']} facts")

    # -- the suite-wide truth check ------------------------------------------------------

    def truth_queries(self) -> list[str]:
        sc = self.scenario
        queries = [t.text for t in sc.stale_turns()][:2]
        objects = sorted({o for _, o in sc.stale_slots()})
        if objects:
            queries.append(" ".join(objects + sorted(sc.live_objects())))
        queries += list(sc.queries)
        return queries[:4]

    def context_truth(self) -> list[str]:
        """/context never shows an ended fact, or a turn stating one, as current.
        `self.stale_seen` counts the stale turns and former facts the answers
        showed, so a suite-wide check that saw none can say so."""
        problems: list[str] = []
        self.stale_seen = 0
        history = self.facts(include_history="true")
        ended_texts = {_fold(f["text"]).rstrip(" .") for f in history if f.get("current") is False}
        ended_texts -= {_fold(f["text"]).rstrip(" .") for f in history if f.get("current") is True}
        live = self.scenario.live_objects() | {
            _fold(f["object"]) for f in history if f.get("current") is True
        }
        stale_objects = {o for _, o in self.scenario.stale_slots()} - live
        stale_turns = [_fold(t.text) for t in self.scenario.stale_turns()]
        said = {_fold(t.text)[:60]: t.ts[:10] for t in self.scenario.turns}
        for query in self.truth_queries():
            recalled = self.context(query)
            items = context_items(recalled)
            if not _ordered(items):
                problems.append(f"[{query}] not current, then episodes, then history: {recalled}")
            for kind, line in items:
                if kind == "episode":
                    m = re.search(r"said on (\d{4}-\d{2}-\d{2})", line)
                    own = _own_text(line)
                    for head, day in said.items():
                        if own.startswith(head) and (m is None or m.group(1) != day):
                            problems.append(f"[{query}] turn said on {day} dated otherwise: {line}")
                folded = _fold(line)
                if kind == "current":
                    if _body(line) in ended_texts:
                        problems.append(f"[{query}] ended fact shown as current: {line}")
                    for obj in stale_objects:
                        if _has_word(line, obj):
                            problems.append(
                                f"[{query}] ended value {obj!r} shown as current: {line}"
                            )
                if kind == "history":
                    self.stale_seen += 1
                for turn in stale_turns:
                    if turn[:60] in folded:
                        self.stale_seen += 1
                        if kind == "current":
                            problems.append(f"[{query}] stale turn shown as current: {line}")
                        elif kind == "episode" and "since superseded" not in folded:
                            problems.append(
                                f"[{query}] stale turn without '(since superseded)': {line}"
                            )
                        if re.search(r"\.\.\s*now\b", folded):
                            problems.append(
                                f"[{query}] stale turn shown as valid until now: {line}"
                            )
        return problems


def context_items(recalled: str) -> list[tuple[str, str]]:
    """The recalled block's entries as (kind, line): "history" for
    'formerly (until ...)', "episode" for 'said on ...', else "current"."""
    out: list[tuple[str, str]] = []
    for raw in recalled.splitlines():
        line = raw.strip()
        if not line or line.startswith("<") or line.startswith("Retrieved memory"):
            continue
        folded = line.casefold()
        if "formerly" in folded:
            kind = "history"
        elif "said on" in folded:
            kind = "episode"
        else:
            kind = "current"
        out.append((kind, line))
    return out


def _body(line: str) -> str:
    """A recalled line's text without its list marker and its (...) / [...] labels."""
    text = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", line.strip().removeprefix("- "))
    return _fold(text).rstrip(" .")


_ORDER = {"current": 0, "episode": 1, "history": 2}


def _ordered(items: list[tuple[str, str]]) -> bool:
    ranks = [_ORDER[kind] for kind, _ in items]
    return ranks == sorted(ranks)


def _own_text(line: str) -> str:
    """A recalled line's text after its marker and its 'said on ...:' or
    'formerly (...):' label."""
    text = line.strip().removeprefix("- ")
    text = re.sub(r"^\[[^\]]*\]\s*", "", text)
    text = re.sub(r"^(?:said on [^:]*|formerly[^:]*):\s*", "", text, flags=re.I)
    return _fold(text)


def final_state(run: Run) -> list[tuple[object, ...]]:
    """Every fact the space knows, current and former, to the day."""
    return sorted(
        (
            _fold(f["subject"]),
            f["predicate"],
            _fold(f["object"]),
            _day(f["valid_from"]),
            _day(f["valid_to"]),
            f["current"],
        )
        for f in run.facts(include_history="true")
    )


def _parse(value: str) -> datetime:
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _brief(facts: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            f.get("subject"),
            f.get("predicate"),
            f.get("object"),
            _day(f.get("valid_from")),
            _day(f.get("valid_to")),
            f.get("current"),
        )
        for f in facts
    ]


def _describe(step: Any) -> str:
    fields = {k: v for k, v in vars(step).items() if v not in (None, (), {}, False)}
    return f"{type(step).__name__}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"


def run_scenario(stack: Stack, scenario: Scenario, extractor: str, *, checks: bool = True) -> Run:
    run = Run(scenario=scenario, extractor=extractor, stack=stack)
    try:
        with workers.broker(app, stack.lanes[extractor].redis.url):
            run.play(checks=checks)
    finally:
        # kombu keeps a producer pool per broker URL; the one broker() closed
        # would be handed out again the next time this lane's URL is used.
        kombu.pools.reset()
    stack.runs[(scenario.name, extractor)] = run
    return run
