from django.contrib import admin

from environment.models import EnvironmentSnapshot


@admin.register(EnvironmentSnapshot)
class EnvironmentSnapshotAdmin(admin.ModelAdmin):
    list_display = ("hostname", "source", "space", "created_at")
    list_filter = ("source", "space")
    search_fields = ("hostname",)
