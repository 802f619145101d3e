"""Curation in the Django admin. Actions call services; nothing here holds
memory logic of its own."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.contrib import admin, messages
from django.db import models as db_models
from django.db import transaction
from django.db.models import QuerySet
from django.forms import BaseModelForm, BaseModelFormSet
from django.http import HttpRequest

from memory import models
from memory.services import audit, outbox

log = logging.getLogger(__name__)

# Deleting these from the admin removes text from a full-text index.
_FTS_OF = {
    models.MemoryItem: "memory_item_fts",
    models.Turn: "memory_turn_fts",
    models.SessionSummary: "memory_summary_fts",
}


def _space_id(obj: db_models.Model) -> int | None:
    if isinstance(obj, models.Space):
        return obj.pk
    space_id = getattr(obj, "space_id", None)
    if space_id is None and isinstance(obj, models.CoreBlockVersion):
        space_id = (
            models.CoreBlock.objects.filter(pk=obj.block_id)
            .values_list("space_id", flat=True)
            .first()
        )
    return space_id


def _actor(request: HttpRequest) -> str:
    return f"admin:{request.user.get_username()}"[:60]


def _record(
    request: HttpRequest, action: str, rows: Iterable[tuple[int | None, str, object]], **detail: Any
) -> None:
    for space_id, label, pk in rows:
        if space_id is None:
            continue
        if action == "admin_delete" and label == "memory.Space":
            # The space's audit log goes with it; the operator's log keeps it.
            log.warning("space %s deleted in the admin by %s", pk, _actor(request))
            continue
        audit.record_admin(
            space_id=space_id,
            action=action,
            obj_label=label,
            pk=pk,
            actor=_actor(request),
            **detail,
        )


class AuditedAdmin(admin.ModelAdmin):
    """Every save and delete made in the admin lands in the space's audit log
    (the model, the id and the names of changed fields, never the values),
    deletions log no text in the admin's own change log either, and after a
    deletion the database gives the bytes back as after a hard forget."""

    def save_model(self, request: HttpRequest, obj: Any, form: BaseModelForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        action = "admin_edit" if change else "admin_add"
        fields = sorted(form.changed_data)
        _record(request, action, [(_space_id(obj), obj._meta.label, obj.pk)], fields=fields)

    def save_formset(
        self, request: HttpRequest, form: BaseModelForm, formset: BaseModelFormSet, change: bool
    ) -> None:
        super().save_formset(request, form, formset, change)
        for obj in formset.new_objects:
            _record(request, "admin_add", [(_space_id(obj), obj._meta.label, obj.pk)])
        for obj, fields in formset.changed_objects:
            rows = [(_space_id(obj), obj._meta.label, obj.pk)]
            _record(request, "admin_edit", rows, fields=sorted(fields))
        for obj in formset.deleted_objects:
            _record(request, "admin_delete", [(_space_id(obj), obj._meta.label, obj.pk)])

    def _deleted(self, request: HttpRequest, objs: Iterable[Any]) -> None:
        rows = [(_space_id(o), o._meta.label, o.pk) for o in objs]
        _record(request, "admin_delete", rows)
        fts = [_FTS_OF[self.model]] if self.model in _FTS_OF else []
        table = self.model._meta.db_table

        def reclaim_bytes() -> None:
            from memory.services import reclaim

            reclaim.after_hard_forget(fts_tables=fts, tables=[table])

        transaction.on_commit(reclaim_bytes)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        rows = [obj]
        pk = obj.pk
        super().delete_model(request, obj)
        obj.pk = pk  # Django clears it on delete; the audit row names it
        self._deleted(request, rows)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        doomed = list(queryset)
        super().delete_queryset(request, queryset)
        self._deleted(request, doomed)

    def log_deletions(self, request: HttpRequest, queryset: Any) -> Any:
        # Django names the object by str(obj), which for memory is its text.
        from django.contrib.admin.models import DELETION, LogEntry
        from django.contrib.contenttypes.models import ContentType

        user_id = request.user.pk
        assert user_id is not None  # the admin is for signed-in staff only
        return LogEntry.objects.bulk_create(
            [
                LogEntry(
                    user_id=user_id,
                    content_type_id=ContentType.objects.get_for_model(
                        obj, for_concrete_model=False
                    ).id,
                    object_id=str(obj.pk),
                    object_repr=f"{obj._meta.verbose_name} {obj.pk}",
                    action_flag=DELETION,
                    change_message="",
                )
                for obj in queryset
            ]
        )


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
            set_host_access(space=space, allowed=allowed, actor=_actor(request))
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


class CoreBlockVersionInline(admin.TabularInline):
    model = models.CoreBlockVersion
    extra = 0
    fields = ("version", "author", "reason", "created_at", "text")
    readonly_fields = fields
    can_delete = False
    ordering = ("-version",)


@admin.register(models.CoreBlock)
class CoreBlockAdmin(AuditedAdmin):
    list_display = ("space", "label", "version", "budget_tokens", "updated_at")
    list_filter = ("label", "space")
    search_fields = ("text",)
    inlines = [CoreBlockVersionInline]


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


@admin.register(models.MemoryItem)
class MemoryItemAdmin(AuditedAdmin):
    list_display = (
        "id",
        "text",
        "kind",
        "subject",
        "predicate",
        "object",
        "status",
        "screen_status",
        "importance",
        "frequency",
        "valid_from",
        "valid_to",
        "created_at",
        "expired_at",
    )
    list_filter = ("status", "screen_status", "kind", "source", "space")
    search_fields = ("text", "subject", "object", "predicate")
    raw_id_fields = ("superseded_by", "source_session")
    date_hierarchy = "created_at"
    readonly_fields = ("content_hash",)


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

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # the audit log is append-only


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
