from __future__ import annotations

from django.db import models
from django.utils import timezone


class EnvironmentSnapshot(models.Model):
    """L5: one observation of a host. With no space it describes the machine
    Engram itself runs on (the probe); with a space, a host an agent reported."""

    space = models.ForeignKey(
        "memory.Space", null=True, blank=True, on_delete=models.CASCADE, related_name="environment"
    )
    source = models.CharField(max_length=20, default="probe")  # probe | agent
    hostname = models.CharField(max_length=255, blank=True)
    data = models.JSONField(default=dict)
    drift = models.JSONField(default=dict, blank=True)  # what changed since the previous snapshot
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["space", "hostname", "created_at"], name="env_host_time_idx")
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.hostname or 'host'} @ {self.created_at:%Y-%m-%d %H:%M}"
