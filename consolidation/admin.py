from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from consolidation import services
from consolidation.models import ConsolidationRun


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "space",
        "trigger",
        "status",
        "llm_calls",
        "report",
        "started_at",
        "finished_at",
    )
    list_filter = ("status", "trigger", "space")
    search_fields = ("report",)
    readonly_fields = ("steps", "errors", "report", "llm_calls", "lease_until")
    actions = ["run_now"]

    @admin.action(description="Run consolidation now for the spaces of the selected runs")
    def run_now(self, request: HttpRequest, queryset: QuerySet[ConsolidationRun]) -> None:
        started, active = 0, 0
        for space in {run.space for run in queryset.select_related("space")}:
            _, created = services.start_run(space=space, trigger="admin")
            started += created
            active += not created
        self.message_user(
            request,
            f"{started} run(s) started; {active} space(s) already had a run in progress.",
            messages.SUCCESS,
        )
