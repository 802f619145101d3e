"""Skills (L4): drafts to enable or reject, edits screened and audited by
the skills service, usage counts."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import actor, page, space_for
from memory.errors import EngramError
from memory.models import Skill

STATES = ("draft", "enabled", "disabled")


@staff_member_required
def skills(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    state = request.GET.get("state", "")
    state = state if state in STATES else ""
    return page(
        request,
        "memory/skills.html",
        "skills",
        space=space,
        skills=selectors.skills_page(space=space, state=state, page=request.GET.get("page")),
        state=state,
    )


@staff_member_required
@require_POST
def skill_action(request: HtmxHttpRequest, skill_id: int, action: str) -> HttpResponse:
    from memory.services import skills as service

    space = space_for(request)
    skill = Skill.objects.filter(space=space, pk=skill_id).first()
    if skill is None:
        messages.error(request, _("That skill is not in this space."))
        return redirect("memory:skills")
    try:
        if action == "enable":
            service.update_skill(skill=skill, actor=actor(request), enabled=True)
            messages.success(request, _("Enabled: agents see this skill from now on."))
        elif action == "disable":
            service.update_skill(skill=skill, actor=actor(request), enabled=False)
            messages.success(request, _("Disabled: agents no longer see this skill."))
        elif action == "reject":
            if not skill.is_draft:
                messages.error(request, _("Only a draft is rejected; disable a skill instead."))
            else:
                service.delete_skill(skill=skill, actor=actor(request))
                messages.success(request, _("Draft rejected and removed."))
        elif action == "edit":
            name = request.POST.get("name", "")[:200]
            description = request.POST.get("description", "")[:4000]
            body = request.POST.get("body", "")[:20000]
            service.edit_skill(
                skill=skill, actor=actor(request), name=name, description=description, body=body
            )
            messages.success(request, _("Saved."))
        else:
            messages.error(request, _("Unknown action."))
    except EngramError as exc:
        messages.error(request, exc.detail)
    return redirect("memory:skills")
