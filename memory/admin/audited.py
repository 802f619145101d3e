"""The base of every admin page: saves and deletions land in the space's
audit log, deletions give their bytes back."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.db import models as db_models
from django.db import transaction
from django.db.models import QuerySet
from django.forms import BaseModelForm, BaseModelFormSet
from django.http import HttpRequest

from memory import models
from memory.services import audit

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


def actor_of(request: HttpRequest) -> str:
    return f"admin:{request.user.get_username()}"[:60]


def record(
    request: HttpRequest, action: str, rows: Iterable[tuple[int | None, str, object]], **detail: Any
) -> None:
    for space_id, label, pk in rows:
        if space_id is None:
            continue
        if action == "admin_delete" and label == "memory.Space":
            # The space's audit log goes with it; the operator's log keeps it.
            log.warning("space %s deleted in the admin by %s", pk, actor_of(request))
            continue
        audit.record_admin(
            space_id=space_id,
            action=action,
            obj_label=label,
            pk=pk,
            actor=actor_of(request),
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
        record(request, action, [(_space_id(obj), obj._meta.label, obj.pk)], fields=fields)

    def save_formset(
        self, request: HttpRequest, form: BaseModelForm, formset: BaseModelFormSet, change: bool
    ) -> None:
        super().save_formset(request, form, formset, change)
        for obj in formset.new_objects:
            record(request, "admin_add", [(_space_id(obj), obj._meta.label, obj.pk)])
        for obj, fields in formset.changed_objects:
            rows = [(_space_id(obj), obj._meta.label, obj.pk)]
            record(request, "admin_edit", rows, fields=sorted(fields))
        for obj in formset.deleted_objects:
            record(request, "admin_delete", [(_space_id(obj), obj._meta.label, obj.pk)])

    def _deleted(self, request: HttpRequest, objs: Iterable[Any]) -> None:
        rows = [(_space_id(o), o._meta.label, o.pk) for o in objs]
        record(request, "admin_delete", rows)
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
