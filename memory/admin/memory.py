"""Admin pages for memory itself, which keep its rules: a fact's text is
corrected as a new version that supersedes the old one (history kept), a
core block is edited through its screen, budget and version history, and
facts are forgotten, restored or released from quarantine by the services
that do so everywhere else. Nothing is added here: facts enter through the
API, the tools and the dashboard, where they are screened and resolved."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import BaseModelForm
from django.http import HttpRequest

from memory import models
from memory.admin.audited import AuditedAdmin, actor_of, record
from memory.errors import EngramError
from memory.services import approval, core, curation
from memory.services import forget as forgetting


class CoreBlockVersionInline(admin.TabularInline):
    model = models.CoreBlockVersion
    extra = 0
    fields = ("version", "author", "reason", "created_at", "text")
    readonly_fields = fields
    can_delete = False
    ordering = ("-version",)


class CoreBlockForm(forms.ModelForm):
    class Meta:
        model = models.CoreBlock
        fields = ("text",)

    def clean_text(self) -> str:
        try:
            return core.checked_text(block=self.instance, text=self.cleaned_data["text"])
        except EngramError as exc:
            raise forms.ValidationError(exc.detail) from exc


@admin.register(models.CoreBlock)
class CoreBlockAdmin(AuditedAdmin):
    list_display = ("space", "label", "version", "budget_tokens", "updated_at")
    list_filter = ("label", "space")
    search_fields = ("text",)
    form = CoreBlockForm
    fields = ("space", "label", "version", "budget_tokens", "updated_at", "text")
    readonly_fields = ("space", "label", "version", "budget_tokens", "updated_at")
    inlines = [CoreBlockVersionInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a space's blocks are made with it

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # emptied by an edit, never deleted: the history stays

    def save_model(self, request: HttpRequest, obj: Any, form: BaseModelForm, change: bool) -> None:
        if "text" not in form.changed_data:
            return
        # A new version with its author, never the row rewritten in place.
        block = core.set_text(
            space=obj.space,
            label=obj.label,
            text=form.cleaned_data["text"],
            author=actor_of(request),
            reason="edited in the admin",
        )
        record(request, "admin_edit", [(obj.space_id, obj._meta.label, obj.pk)], fields=["text"])
        obj.refresh_from_db()
        self.message_user(request, f"Saved as version {block.version}.")


class MemoryItemForm(forms.ModelForm):
    class Meta:
        model = models.MemoryItem
        fields = ("text", "importance")

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        if "text" in self.changed_data:
            try:
                text = curation.check(old=self.instance, text=text)
            except EngramError as exc:
                raise forms.ValidationError(exc.detail) from exc
        return text


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
    date_hierarchy = "created_at"
    form = MemoryItemForm
    readonly_fields = (
        "space",
        "kind",
        "subject",
        "predicate",
        "object",
        "status",
        "screen_status",
        "screen_reasons",
        "source",
        "valid_from",
        "valid_to",
        "stated_at",
        "created_at",
        "expired_at",
        "superseded_by",
        "content_hash",
    )
    fields = ("text", "importance", *readonly_fields)
    actions = ["forget", "forget_hard", "restore", "release"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # Deleting is forgetting: the actions below, which also take the fact
        # out of core memory, the graph and every index.
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: BaseModelForm, change: bool) -> None:
        changed = set(form.changed_data)
        if "importance" in changed:
            models.MemoryItem.objects.filter(pk=obj.pk).update(importance=obj.importance)
            record(
                request,
                "admin_edit",
                [(obj.space_id, obj._meta.label, obj.pk)],
                fields=["importance"],
            )
        if "text" in changed:
            old = models.MemoryItem.objects.get(pk=obj.pk)
            new = curation.correct(
                space=old.space, old=old, text=obj.text, actor=actor_of(request), source="manual"
            )
            self.message_user(
                request, f"Saved as a new version, #{new.pk}; #{old.pk} is kept as its history."
            )

    def _each(
        self,
        request: HttpRequest,
        queryset: QuerySet[models.MemoryItem],
        run: Any,
        done: str,
    ) -> None:
        count, refused = 0, []
        for item in queryset.select_related("space"):
            try:
                count += int(bool(run(item)))
            except EngramError as exc:
                refused.append(f"#{item.pk}: {exc.detail}")
        self.message_user(request, done.format(count=count))
        for reason in refused:
            self.message_user(request, reason, messages.WARNING)

    @admin.action(description="Forget selected facts (restorable)")
    def forget(self, request: HttpRequest, queryset: QuerySet[models.MemoryItem]) -> None:
        actor = actor_of(request)
        self._each(
            request,
            queryset,
            lambda item: forgetting.forget(space=item.space, item_id=item.pk, actor=actor),
            "Forgot {count} fact(s); restore brings them back.",
        )

    @admin.action(description="Forget selected facts for good (history and every index)")
    def forget_hard(self, request: HttpRequest, queryset: QuerySet[models.MemoryItem]) -> None:
        actor = actor_of(request)
        self._each(
            request,
            queryset,
            lambda item: forgetting.forget(
                space=item.space, item_id=item.pk, hard=True, actor=actor
            ),
            "Forgot {count} fact(s) for good.",
        )

    @admin.action(description="Restore selected forgotten or archived facts")
    def restore(self, request: HttpRequest, queryset: QuerySet[models.MemoryItem]) -> None:
        actor = actor_of(request)
        self._each(
            request,
            queryset,
            lambda item: forgetting.bring_back(item=item, actor=actor),
            "Restored {count} fact(s).",
        )

    @admin.action(description="Release selected facts from quarantine")
    def release(self, request: HttpRequest, queryset: QuerySet[models.MemoryItem]) -> None:
        actor = actor_of(request)
        self._each(
            request,
            queryset,
            lambda item: curation.release(item=item, actor=actor),
            "Released {count} fact(s) from quarantine.",
        )


@admin.register(models.ProposedWrite)
class ProposedWriteAdmin(AuditedAdmin):
    """Proposed writes (ENGRAM_WRITE_APPROVAL): read-only records, decided by
    the actions below through the same service as Review and the API."""

    list_display = ("id", "created_at", "space", "target", "label", "proposer", "status")
    list_filter = ("status", "target", "space")
    search_fields = ("proposer", "reason")
    date_hierarchy = "created_at"
    actions = ["approve", "reject"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # A decided proposal is the record of who asked and who decided.
        return False

    def _decide(
        self, request: HttpRequest, queryset: QuerySet[models.ProposedWrite], decide: Any, done: str
    ) -> None:
        actor = actor_of(request)
        count, refused = 0, []
        for proposal in queryset.select_related("space").order_by("created_at", "id"):
            try:
                decide(space=proposal.space, proposal=proposal, actor=actor)
                count += 1
            except EngramError as exc:
                refused.append(f"#{proposal.pk}: {exc.detail}")
        self.message_user(request, done.format(count=count))
        for reason in refused:
            self.message_user(request, reason, messages.WARNING)

    @admin.action(description="Approve selected proposals (apply them)")
    def approve(self, request: HttpRequest, queryset: QuerySet[models.ProposedWrite]) -> None:
        self._decide(
            request, queryset, approval.approve, "Approved and applied {count} proposal(s)."
        )

    @admin.action(description="Reject selected proposals (nothing is written)")
    def reject(self, request: HttpRequest, queryset: QuerySet[models.ProposedWrite]) -> None:
        self._decide(request, queryset, approval.reject, "Rejected {count} proposal(s).")
