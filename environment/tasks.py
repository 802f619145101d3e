"""Celery tasks of the environment app."""

from __future__ import annotations

from celery import shared_task

from environment.services import refresh_probe


@shared_task(name="environment.refresh_probe", ignore_result=True)
def refresh_environment() -> int:
    return refresh_probe().pk
