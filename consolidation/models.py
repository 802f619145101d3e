from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class ConsolidationRun(models.Model):
    """One sleep-time run over one space, with counts per step. A partial
    unique constraint means two runs of one space can never be active at once."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    space = models.ForeignKey(
        "memory.Space", on_delete=models.CASCADE, related_name="consolidation_runs"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    trigger = models.CharField(max_length=20, default="manual")  # idle | daily | manual | cli
    steps = models.JSONField(default=dict, blank=True)  # {step: {counts..., seconds}}
    llm_calls = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    report = models.TextField(blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["space"],
                condition=Q(status__in=["pending", "running"]),
                name="one_active_run_per_space",
            ),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk} {self.status}"
