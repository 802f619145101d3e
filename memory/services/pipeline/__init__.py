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
from memory.models import Adjudication, AuditEvent, IngestJob, MemoryItem, Turn
from memory.screening import screen_fact
from memory.services import audit, facts, identity, outbox
from memory.services.pipeline import extract, resolve, retrieve, routing, salience
from memory.services.pipeline.candidates import Candidate
from memory.services.providers import mirror as provider_mirror

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
        # Scope routing: with a linked user space, personal facts are
        # retrieved against, resolved in and written to that space.
        user_space = routing.linked_space(job.payload, space)
        routes = routing.split(candidates, home=space, user_space=user_space)
        # 3. retrieve-similar
        neighbours = {
            i: [] if i in flagged else retrieve.similar(space=route.space, candidate=c)
            for route in routes
            for i, c in zip(route.indexes, route.candidates, strict=True)
        }
        # 4. resolution
        decisions = {
            route.scope: resolve.resolve(
                space=route.space,
                candidates=route.candidates,
                neighbours=[neighbours[i] for i in route.indexes],
                use_llm=extractor == "llm",
            )
            for route in routes
        }
    result.update(
        skip_reason="",
        extractor=extractor,
        candidates=len(candidates),
        llm_calls=calls.calls,
    )
    if user_space is not None:
        result["routing"] = routing.summary(routes, home=space, user_space=user_space)

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
    # A fact routed to the user space keeps no link to the project's session
    # or turn: every project linked to that user space reads it, and none of
    # them may learn another project's conversations from it.
    personal_prov = facts.Provenance(source="chat", actor="pipeline", said_at=turn.ts)
    actions: list[dict[str, Any]] = []
    new_items: dict[int, list[int]] = {route.space.pk: [] for route in routes}
    with transaction.atomic():
        # This space's fact writers take turns (see facts.lock_space_writes),
        # the spaces always in one order so two routed jobs cannot wait on
        # each other. The job is finished last, in the same transaction: a
        # rival worker that took over an expired lease waits here, and then
        # finds the job done and rolls its writes back.
        for locked in sorted((r.space for r in routes), key=lambda s: s.pk):
            facts.lock_space_writes(locked)
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
            _step(
                turn,
                "retrieve",
                neighbours=[[n.pk for n in neighbours[i]] for i in range(len(candidates))],
            ),
        ]
        linked = 0
        core_changed = 0
        adjudications: list[Adjudication] = []
        # The events the writes record go into the one INSERT below.
        with audit.batched() as events:
            for route in routes:
                target = route.space
                route_prov = prov if target.pk == space.pk else personal_prov
                for i, decision in zip(route.indexes, decisions[route.scope], strict=True):
                    if i in flagged:
                        res = facts.quarantine(
                            space=target,
                            candidate=decision.candidate,
                            reasons=flagged[i],
                            prov=route_prov,
                        )
                    else:
                        res = facts.apply(space=target, decision=decision, prov=route_prov)
                    item = res.item
                    if decision.adjudication is not None:
                        # What was written, which apply may have changed (a
                        # duplicate added meanwhile becomes a NOOP).
                        decision.adjudication.item = item
                        decision.adjudication.action = res.action
                        adjudications.append(decision.adjudication)
                    action = {
                        "action": res.action,
                        "item": item.pk if item else None,
                        "superseded": res.superseded,
                        "reason": res.reason,
                    }
                    if "routing" in result:
                        action["scope"] = route.scope
                    actions.append(action)
                    if item is not None and res.action in ("ADD", "UPDATE") and item.is_live:
                        # 5. graph, 6. core-memory proposal
                        linked += facts.link_item(space=target, item=item)
                        core_changed += int(_core(space=target, item=item))
                    if item is not None and res.action in ("ADD", "UPDATE", "DEFER"):
                        new_items[target.pk].append(item.pk)
        steps.append(_step(turn, "graph", relations=linked))
        steps.append(_step(turn, "core_proposal", changed=core_changed))
        # The per-step trail and what the writes recorded, in one INSERT: it
        # is most of the rows a turn writes.
        AuditEvent.objects.bulk_create(events + steps)
        Adjudication.objects.bulk_create(adjudications)
        result["actions"] = actions
        result["ms"] = round((time.perf_counter() - started) * 1000, 2)
        _finish(job, result)
    # Copies to mirroring providers, scheduled now that the writes committed.
    names = {route.space.pk: route.space.name for route in routes}
    for space_pk, item_ids in new_items.items():
        provider_mirror.after_commit(space_name=names[space_pk], item_ids=item_ids)
    # 7. embedding, outside the transaction (network): the new items and the
    # turn itself, which recall's vector channel ranks too. A failing backend
    # never fails the job; the background catch-up embeds what is missing.
    for space_pk, item_ids in new_items.items():
        if space_pk != space.pk and item_ids:
            embeddings.index_written(space_id=space_pk, item_ids=item_ids, turn_ids=[])
    home_items = new_items.get(space.pk, [])
    embedded = embeddings.index_written(space_id=space.pk, item_ids=home_items, turn_ids=[turn.pk])
    if embedded:  # empty when embeddings are off: nothing to record
        audit.record(
            space=space,
            action="embed",
            target_type="turn",
            target_id=turn.pk,
            actor="pipeline",
            items=home_items,
            **embedded,
        )
    return result


def _step(turn: Turn, action: str, **detail: Any) -> AuditEvent:
    return audit.event(
        space=turn.space_id,
        action=action,
        target_type="turn",
        target_id=turn.pk,
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
