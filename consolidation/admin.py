from django.contrib import admin

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
