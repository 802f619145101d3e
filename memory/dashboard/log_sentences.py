"""An audit event's details as a readable, translated sentence: one
function per action family, "key: value" pairs for anything else (never a
raw Python dict)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from memory.models import AuditEvent


def _target(e: AuditEvent) -> str:
    if e.target_type == "item":
        return _("memory %(id)s") % {"id": e.target_id}
    if e.target_type == "core":
        return _("the %(label)s core block") % {"label": e.target_id}
    if e.target_type == "turn":
        return _("turn %(id)s") % {"id": e.target_id}
    if e.target_type == "space":
        return _("the space")
    if e.target_type == "proposal":
        return _("proposal %(id)s") % {"id": e.target_id}
    return f"{e.target_type} {e.target_id}".strip()


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_value(v) for v in value) or "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    return str(value)


def pairs(detail: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    return "; ".join(f"{k}: {_value(v)}" for k, v in detail.items() if k not in skip)


def _write(e: AuditEvent, d: dict[str, Any]) -> str:
    verbs = {
        "add": _("Stored %(target)s"),
        "noop": _("Saw %(target)s again; nothing changed"),
        "reinforce": _("Reinforced %(target)s"),
        "defer": _("Held %(target)s for review (it contradicts what is known)"),
        "embed": _("Embedded %(target)s"),
        "salience": _("Skipped %(target)s as not worth remembering"),
        "use": _("Used %(target)s"),
    }
    return verbs.get(e.action, _("%(target)s")) % {"target": _target(e)}


def _correction(e: AuditEvent, d: dict[str, Any]) -> str:
    old = d.get("replaces") or d.get("superseded") or d.get("old")
    if old:
        return _("Wrote %(target)s, superseding memory %(old)s") % {
            "target": _target(e),
            "old": _value(old),
        }
    if e.action == "expire":
        return _("Closed %(target)s: it is no longer true") % {"target": _target(e)}
    if e.action == "merge":
        return _("Merged into %(target)s") % {"target": _target(e)}
    return _("Changed %(target)s") % {"target": _target(e)}


def _forgetting(e: AuditEvent, d: dict[str, Any]) -> str:
    if e.action == "forget":
        hard = d.get("hard")
        return (
            _("Deleted %(target)s for good") if hard else _("Forgot %(target)s (restorable)")
        ) % {"target": _target(e)}
    if e.action == "restore":
        return _("Restored %(target)s") % {"target": _target(e)}
    if e.action == "wipe":
        rows = d.get("rows") or d.get("count") or 0
        return ngettext(
            "Wiped the space: %(n)s row deleted",
            "Wiped the space: %(n)s rows deleted",
            int(rows or 0),
        ) % {"n": rows}
    if e.action == "archive":
        return _("Archived %(target)s (decayed; restorable)") % {"target": _target(e)}
    return _("Removed %(target)s") % {"target": _target(e)}


def _core(e: AuditEvent, d: dict[str, Any]) -> str:
    if e.action == "edit":
        return _("Saved %(target)s as version %(version)s (%(reason)s)") % {
            "target": _target(e),
            "version": d.get("version", "?"),
            "reason": d.get("reason") or _("no reason given"),
        }
    if e.action == "refuse":
        return _("Refused a change to %(target)s: %(why)s") % {
            "target": _target(e),
            "why": _value(d.get("reasons") or d.get("reason") or "—"),
        }
    return _("Removed a line from %(target)s") % {"target": _target(e)}


def _security(e: AuditEvent, d: dict[str, Any]) -> str:
    reasons = _value(d.get("reasons") or [])
    if e.action == "quarantine":
        return _("Quarantined %(target)s: %(reasons)s") % {"target": _target(e), "reasons": reasons}
    if e.action == "release":
        return _("Released %(target)s from quarantine (the screen said: %(reasons)s)") % {
            "target": _target(e),
            "reasons": reasons,
        }
    allowed = d.get("allowed")
    return (_("Allowed access from %(host)s") if allowed else _("Refused access from %(host)s")) % {
        "host": d.get("host", "?")
    }


def _consolidation(e: AuditEvent, d: dict[str, Any]) -> str:
    return _("Consolidation ran")


def _review(e: AuditEvent, d: dict[str, Any]) -> str:
    if e.action == "assess":
        return _("Judged the usefulness of search answers (%(target)s)") % {"target": _target(e)}
    if e.action == "report":
        return _("Reported how %(target)s worked") % {"target": _target(e)}
    if e.action == "propose":
        return _("Proposed a write for a person to approve (%(target)s)") % {"target": _target(e)}
    if e.action == "proposal_approve":
        return _("Approved and applied %(target)s") % {"target": _target(e)}
    if e.action == "proposal_reject":
        return _("Rejected %(target)s; nothing was written") % {"target": _target(e)}
    return _("Reviewed %(target)s") % {"target": _target(e)}


def _admin(e: AuditEvent, d: dict[str, Any]) -> str:
    verbs = {"admin_add": _("added"), "admin_edit": _("changed"), "admin_delete": _("deleted")}
    return _("In the admin, %(verb)s %(target)s") % {
        "verb": verbs.get(e.action, e.action),
        "target": _target(e),
    }


FAMILIES: dict[str, Callable[[AuditEvent, dict[str, Any]], str]] = {
    "writes": _write,
    "corrections": _correction,
    "forgetting": _forgetting,
    "core": _core,
    "security": _security,
    "consolidation": _consolidation,
    "review": _review,
    "admin": _admin,
}
_SAID = {"replaces", "superseded", "hard", "version", "reason", "reasons", "allowed", "host"}


def sentence(event: AuditEvent) -> tuple[str, str]:
    """(the sentence, the remaining details as "key: value" pairs)."""
    from memory.curation_reads import class_of

    detail = event.detail if isinstance(event.detail, dict) else {"detail": event.detail}
    family = FAMILIES.get(class_of(event.action))
    if family is None:
        return f"{event.action} · {_target(event)}", pairs(detail)
    return family(event, detail), pairs(detail, skip=tuple(_SAID))
