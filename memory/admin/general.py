"""Admin pages for what has no memory rules of its own to keep: spaces, keys,
sessions, turns, summaries, the graph, vectors, beliefs, skills, the audit
log, jobs and LLM usage."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from memory import models
from memory.admin.audited import AuditedAdmin, actor_of
from memory.services import outbox


@admin.register(models.Space)
class SpaceAdmin(AuditedAdmin):
    list_display = (
        "name",
        "kind",
        "description",
        "host_access",
        "created_at",
        "last_activity_at",
        "last_consolidated_at",
    )
    list_filter = ("host_access",)
    search_fields = ("name", "description")
    actions = ["allow_host_access", "deny_host_access"]

    def _set_host_access(
        self, request: HttpRequest, queryset: QuerySet[models.Space], allowed: bool
    ) -> None:
        from memory.services.spaces import set_host_access

        changed = sum(
            set_host_access(space=space, allowed=allowed, actor=actor_of(request))
            for space in queryset
        )
        self.message_user(
            request, f"Host access {'allowed' if allowed else 'denied'} for {changed} space(s)."
        )

    @admin.action(description="Allow selected spaces to see the server host")
    def allow_host_access(self, request: HttpRequest, queryset: QuerySet[models.Space]) -> None:
        self._set_host_access(request, queryset, True)

    @admin.action(description="Hide the server host from selected spaces")
    def deny_host_access(self, request: HttpRequest, queryset: QuerySet[models.Space]) -> None:
        self._set_host_access(request, queryset, False)


@admin.register(models.ApiKey)
class ApiKeyAdmin(AuditedAdmin):
    list_display = (
        "prefix",
        "space",
        "user_space",
        "name",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("space",)
    search_fields = ("prefix", "name", "space__name")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Keys are created with `manage.py create_api_key`, which shows the
        # secret once; the admin never sees it.
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[models.ApiKey]) -> None:
        from memory.services.spaces import revoke_api_key

        for key in queryset:
            revoke_api_key(key=key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")


@admin.register(models.Session)
class SessionAdmin(AuditedAdmin):
    list_display = ("external_id", "space", "title", "started_at", "last_turn_at")
    list_filter = ("space",)
    search_fields = ("external_id", "title")
    date_hierarchy = "last_turn_at"


@admin.register(models.Turn)
class TurnAdmin(AuditedAdmin):
    list_display = (
        "id",
        "space",
        "session",
        "ref",
        "role",
        "short_text",
        "ts",
        "skip_reason",
        "screen_status",
    )
    list_filter = ("role", "screen_status", "space")
    search_fields = ("text", "ref", "session__external_id")
    raw_id_fields = ("session",)
    date_hierarchy = "ts"

    @admin.display(description="text")
    def short_text(self, obj: models.Turn) -> str:
        return obj.text[:100]


@admin.register(models.SessionSummary)
class SessionSummaryAdmin(AuditedAdmin):
    list_display = ("session", "space", "method", "turn_count", "created_at")
    list_filter = ("method", "space")
    search_fields = ("text",)
    raw_id_fields = ("session",)


class EntityAliasInline(admin.TabularInline):
    model = models.EntityAlias
    extra = 0
    fields = ("alias", "norm")


@admin.register(models.Entity)
class EntityAdmin(AuditedAdmin):
    list_display = ("name", "type", "space", "norm", "last_mentioned_at")
    list_filter = ("type", "space")
    search_fields = ("name", "norm", "aliases__alias")
    inlines = [EntityAliasInline]


@admin.register(models.Relation)
class RelationAdmin(AuditedAdmin):
    list_display = (
        "src",
        "rel",
        "dst",
        "space",
        "valid_from",
        "valid_to",
        "created_at",
        "expired_at",
    )
    list_filter = ("rel", "space")
    search_fields = ("src__name", "dst__name", "rel")
    raw_id_fields = ("src", "dst", "item")


@admin.register(models.MemoryVector)
class MemoryVectorAdmin(AuditedAdmin):
    list_display = ("id", "space", "model", "dim", "item", "turn", "summary", "created_at")
    list_filter = ("model", "dim", "space")
    raw_id_fields = ("item", "turn", "summary")
    exclude = ("vec",)


@admin.register(models.Belief)
class BeliefAdmin(AuditedAdmin):
    list_display = ("text", "status", "proof_count", "space", "updated_at")
    list_filter = ("status", "space")
    search_fields = ("text",)
    filter_horizontal = ("evidence",)


@admin.register(models.Skill)
class SkillAdmin(AuditedAdmin):
    list_display = ("name", "space", "enabled", "is_draft", "source", "usage_count", "updated_at")
    list_filter = ("enabled", "is_draft", "source", "space")
    search_fields = ("name", "description", "body")


@admin.register(models.AuditEvent)
class AuditEventAdmin(AuditedAdmin):
    list_display = ("created_at", "space", "action", "target_type", "target_id", "actor")
    list_filter = ("action", "target_type", "actor", "space")
    search_fields = ("target_id", "actor")
    date_hierarchy = "created_at"

    # The audit log is append-only: written by the services, never by hand.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(models.IngestJob)
class IngestJobAdmin(AuditedAdmin):
    list_display = (
        "id",
        "space",
        "kind",
        "status",
        "attempts",
        "lease_until",
        "sent_at",
        "short_error",
        "updated_at",
    )
    list_filter = ("status", "kind", "space")
    search_fields = ("idempotency_key", "last_error")
    raw_id_fields = ("turn",)
    actions = ["retry"]

    @admin.display(description="last error")
    def short_error(self, obj: models.IngestJob) -> str:
        return obj.last_error[:120]

    @admin.action(description="Retry selected dead-lettered jobs")
    def retry(self, request: HttpRequest, queryset: QuerySet[models.IngestJob]) -> None:
        count = outbox.retry_dead(list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"Re-queued {count} dead job(s).", messages.SUCCESS)


@admin.register(models.LlmUsage)
class LlmUsageAdmin(AuditedAdmin):
    list_display = ("space", "hour", "calls")
    list_filter = ("space",)


@admin.register(models.Adjudication)
class AdjudicationAdmin(AuditedAdmin):
    list_display = (
        "created_at",
        "space",
        "kind",
        "rules_action",
        "verdict",
        "action",
        "judge_used",
        "elapsed_ms",
        "fallback_reason",
    )
    list_filter = ("kind", "judge_used", "verdict", "space")
    search_fields = ("fallback_reason", "judge")
    raw_id_fields = ("item",)
    date_hierarchy = "created_at"

    # A record of what happened: read-only, like the audit log.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
