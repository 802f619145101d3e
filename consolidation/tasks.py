"""Celery tasks of the consolidator: thin wrappers over one service each."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="consolidation.run", acks_late=True, ignore_result=True)
def run_consolidation(run_id: int) -> None:
    from consolidation.services import execute

    execute(run_id)


@shared_task(name="consolidation.idle_check", ignore_result=True)
def idle_check() -> list[int]:
    from consolidation.schedule import check_idle

    return check_idle()


@shared_task(name="consolidation.daily", ignore_result=True)
def daily() -> list[int]:
    from consolidation.schedule import run_daily

    return run_daily()
