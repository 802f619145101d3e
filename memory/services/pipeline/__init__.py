"""The write pipeline: one ingest job = one turn through seven steps.

1 salience gate (screening happened at accept time) · 2 extraction (LLM or
rules) · 3 retrieve-similar · 4 resolution · 5 graph upsert · 6 core-memory
patch proposal · 7 embedding. Steps 1–4 read and call the LLM with no
transaction open; everything they decided is then written in ONE transaction
that first finishes the job with a conditional UPDATE on its lease. A worker
killed halfway leaves nothing behind, and a job delivered twice writes once.
Every step writes an AuditEvent."""

from __future__ import annotations

import logging
import time
import traceback
from typing import Any

from django.db import DatabaseError, transaction

from memory import embeddings, llm
from memory.errors import EngramError
from memory.models import AuditEvent, IngestJob, MemoryItem, Turn
from memory.screening import screen_fact
from memory.services import audit, facts, identity, outbox
from memory.services.pipeline import extract, resolve, retrieve, salience
from memory.services.pipeline.candidates import Candidate

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """Another worker took the job over (our lease ran out); our work is void."""


def run_job(job_id: int, *, claimed: IngestJob | None = None) -> dict[str, Any] | None:
    """Claim the job (unless `claimed`, leased already by outbox.claim_fresh)
    and run it. Transient failures are recorded on the job and re-raised as
    llm.TransientError (the task retries them with backoff) until the job
    runs out of attempts; anything else dead-letters the job at once with its
    error kept."""
    from memory.services.imports import jobs as import_jobs

    job = claimed or outbox.claim(job_id)
    if job is None:
        return None
    try:
        # Import jobs share the outbox (claim, lease, retries, sweeper) and
        # this error handling; only the work differs.
        return import_jobs.run(job) if import_jobs.handles(job) else process(job)
    except (LeaseLost, import_jobs.LeaseLost):
        log.warning("job %s: lease lost to another worker; its result stands", job_id)
        return None
    except llm.TransientError as exc:
        if outbox.fail(job, error=f"transient: {exc}"):
            raise
        log.error("job %s dead-lettered after %s attempts: %s", job_id, job.attempts, exc)
        return None
    except DatabaseError as exc:
        # A locked or restarting database is worth retrying like a flaky LLM.
        try:
            retry = outbox.fail(job, error=f"database: {exc}")
        except DatabaseError:
            retry = True  # cannot even record it: the lease runs out, the sweeper re-sends
        if retry:
            raise llm.TransientError(f"database error: {exc}") from exc
        return None
    except EngramError as exc:
        # Bad data found while running (an import's row naming its field):
        # permanent, and the reason is all a curator needs to read.
        log.warning("job %s failed: %s", job_id, exc.detail)
        outbox.fail(job, error=exc.detail, permanent=True)
        return None
    except Exception as exc:
        log.exception("job %s failed permanently", job_id)
        outbox.fail(
            job,
            error=f"{exc.__class__.__name__}: {exc}\n{traceback.format_exc()[-3000:]}",
            permanent=True,
        )
        return None


def process(job: IngestJob) -> dict[str, Any]:
    started = time.perf_counter()
    if job.turn_id is None:
        with transaction.atomic():
            _finish(job, {"skipped": "no turn"})
        return {"skipped": "no turn"}
    turn = Turn.objects.select_related("session").get(pk=job.turn_id)
    space = job.space
    result: dict[str, Any] = {"turn": turn.pk}

    # 1. salience
    reason = salience.skip_reason(turn)
    if reason:
        result["skip_reason"] = reason
        with transaction.atomic():
            _finish(job, result)
            Turn.objects.filter(pk=turn.pk).update(skip_reason=reason)
            audit.record(
                space=space,
                action="salience",
                target_type="turn",
                target_id=turn.pk,
                actor="pipeline",
                skipped=reason,
            )
        # A skipped turn is still recalled (BM25 and vector channels rank
        # turns), so it is embedded all the same.
        embeddings.index_written(space_id=space.pk, item_ids=[], turn_ids=[turn.pk])
        return result

    with llm.count_calls() as calls:
        # 2. extraction
        candidates, extractor = extract.extract(space=space, turn=turn)
        candidates = _dedupe([identity.resolve(space, c) for c in candidates])
        flagged: dict[int, list[str]] = {}
        for i, c in enumerate(candidates):
            # Strict for what could become a standing instruction or a core
            # entry: a directive to act is never one.
            screened = screen_fact(c.text, kind=c.kind, importance=c.importance)
            c.text = screened.text
            if screened.flagged:
                flagged[i] = screened.reasons
        # 3. retrieve-similar
        neighbours = [
            [] if i in flagged else retrieve.similar(space=space, candidate=c)
            for i, c in enumerate(candidates)
        ]
        # 4. resolution
        decisions = resolve.resolve(
            space=space,
            candidates=candidates,
            neighbours=neighbours,
            use_llm=extractor == "llm",
        )
    result.update(
        skip_reason="",
        extractor=extractor,
        candidates=len(candidates),
        llm_calls=calls.calls,
    )

    prov = facts.Provenance(
        source="chat",
        actor="pipeline",
        session=turn.session,
        turn_refs=(turn.ref or f"turn:{turn.pk}",),
        turn=turn,
        said_at=turn.ts,
        # A turn of a history backfill (memory_ingest_history) is the past
        # replayed: its facts are slotted but not put up for review.
        enrol=not (turn.metadata or {}).get("backfill"),
    )
    actions: list[dict[str, Any]] = []
    new_items: list[int] = []
    with transaction.atomic():
        # First: the UPDATE takes the job row, so a rival worker waits on it,
        # then finds the job done and rolls back. Then this space's fact
        # writers take turns (see facts.lock_space_writes).
        _finish(job, result)
        facts.lock_space_writes(space)
        if turn.skip_reason != "":  # not judged yet (None), or once skipped
            Turn.objects.filter(pk=turn.pk).update(skip_reason="")
        steps = [
            _step(turn, "salience", skipped=""),
            _step(
                turn,
                "extract",
                extractor=extractor,
                candidates=len(candidates),
                llm_calls=calls.calls,
            ),
            _step(turn, "retrieve", neighbours=[[n.pk for n in nb] for nb in neighbours]),
        ]
        linked = 0
        core_changed = 0
        # The events the writes record go into the one INSERT below.
        with audit.batched() as events:
            for i, decision in enumerate(decisions):
                if i in flagged:
                    res = facts.quarantine(
                        space=space, candidate=decision.candidate, reasons=flagged[i], prov=prov
                    )
                else:
                    res = facts.apply(space=space, decision=decision, prov=prov)
                item = res.item
                actions.append(
                    {
                        "action": res.action,
                        "item": item.pk if item else None,
                        "superseded": res.superseded,
                        "reason": res.reason,
                    }
                )
                if item is not None and res.action in ("ADD", "UPDATE") and item.is_live:
                    # 5. graph, 6. core-memory proposal
                    linked += facts.link_item(space=space, item=item)
                    core_changed += int(_core(space=space, item=item))
                if item is not None and res.action in ("ADD", "UPDATE", "DEFER"):
                    new_items.append(item.pk)
        steps.append(_step(turn, "graph", relations=linked))
        steps.append(_step(turn, "core_proposal", changed=core_changed))
        # The per-step trail and what the writes recorded, in one INSERT: it
        # is most of the rows a turn writes.
        AuditEvent.objects.bulk_create(events + steps)
        result["actions"] = actions
        result["ms"] = round((time.perf_counter() - started) * 1000, 2)
        IngestJob.objects.filter(pk=job.pk).update(result=result)
    # 7. embedding, outside the transaction (network): the new items and the
    # turn itself, which recall's vector channel ranks too. A failing backend
    # never fails the job; the background catch-up embeds what is missing.
    embedded = embeddings.index_written(space_id=space.pk, item_ids=new_items, turn_ids=[turn.pk])
    if embedded:  # empty when embeddings are off: nothing to record
        audit.record(
            space=space,
            action="embed",
            target_type="turn",
            target_id=turn.pk,
            actor="pipeline",
            items=new_items,
            **embedded,
        )
    return result


def _step(turn: Turn, action: str, **detail: Any) -> AuditEvent:
    return AuditEvent(
        space_id=turn.space_id,
        action=action,
        target_type="turn",
        target_id=str(turn.pk),
        actor="pipeline",
        detail=detail,
    )


def _core(*, space, item: MemoryItem) -> bool:  # type: ignore[no-untyped-def]
    from memory.services.pipeline import core_patch

    return core_patch.propose(space=space, item=item)


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str, str, str, bool]] = set()
    out: list[Candidate] = []
    for c in candidates:
        key = (c.text.casefold(), c.subject.casefold(), c.predicate, c.object.casefold(), c.retract)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _finish(job: IngestJob, result: dict[str, Any]) -> None:
    if not outbox.finish(job, result=result):
        raise LeaseLost(f"job {job.pk}")
