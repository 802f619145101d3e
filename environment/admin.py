from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from environment import services
from environment.models import EnvironmentSnapshot


@admin.register(EnvironmentSnapshot)
class EnvironmentSnapshotAdmin(admin.ModelAdmin):
    list_display = ("hostname", "source", "space", "created_at", "has_drift")
    list_filter = ("source", "space")
    search_fields = ("hostname",)
    readonly_fields = ("space", "source", "hostname", "data", "drift", "created_at", "prompt_block")
    actions = ["refresh_server_probe"]

    @admin.display(boolean=True, description="drift")
    def has_drift(self, obj: EnvironmentSnapshot) -> bool:
        return bool(obj.drift)

    @admin.display(description="prompt block")
    def prompt_block(self, obj: EnvironmentSnapshot) -> str:
        return services.render_environment(obj.data)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Snapshots come from the probe or an agent report, never typed in.
        return False

    @admin.action(description="Probe the server host now")
    def refresh_server_probe(
        self, request: HttpRequest, queryset: QuerySet[EnvironmentSnapshot]
    ) -> None:
        snap = services.refresh_probe()
        drift = ", ".join(sorted(snap.drift)) or "no drift"
        self.message_user(request, f"Probed {snap.hostname}: {drift}.", messages.SUCCESS)
