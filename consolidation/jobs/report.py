"""Step 9: the report, one line a person reads in the Memory tab:
"+4 facts, merged 3, archived 7, 1 new insight". Built only from the counts
the steps recorded, so it always agrees with them."""

from __future__ import annotations

from typing import Any


def _count(steps: dict[str, Any], step: str, key: str) -> int:
    entry = steps.get(step) or {}
    return int((entry.get("counts") or {}).get(key, 0))


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def figures(steps: dict[str, Any]) -> dict[str, int]:
    return {
        "facts": _count(steps, "promote", "promoted")
        + _count(steps, "compact_core", "facts_added"),
        "merged": _count(steps, "merge", "merged"),
        "contradictions": _count(steps, "merge", "contradictions"),
        "archived": _count(steps, "decay", "archived"),
        "expired": _count(steps, "decay", "expired"),
        "insights": _count(steps, "reflect", "insights"),
        "refuted": _count(steps, "reflect", "refuted"),
        "summaries": _count(steps, "summarize", "summarized"),
        "skill_drafts": _count(steps, "skills", "drafts"),
        "core_compacted": _count(steps, "compact_core", "compacted"),
    }


def build(steps: dict[str, Any]) -> str:
    f = figures(steps)
    parts: list[str] = []
    if f["facts"]:
        parts.append(f"+{_plural(f['facts'], 'fact')}")
    if f["merged"]:
        parts.append(f"merged {f['merged']}")
    if f["contradictions"]:
        parts.append(f"resolved {_plural(f['contradictions'], 'contradiction')}")
    if f["archived"]:
        parts.append(f"archived {f['archived']}")
    if f["expired"]:
        parts.append(f"expired {_plural(f['expired'], 'event')}")
    if f["insights"]:
        parts.append(f"{f['insights']} new {'insight' if f['insights'] == 1 else 'insights'}")
    if f["refuted"]:
        parts.append(f"refuted {_plural(f['refuted'], 'belief')}")
    if f["summaries"]:
        parts.append(f"summarized {_plural(f['summaries'], 'session')}")
    if f["skill_drafts"]:
        parts.append(f"{_plural(f['skill_drafts'], 'skill draft')} to review")
    if f["core_compacted"]:
        parts.append(f"compacted {_plural(f['core_compacted'], 'core block')}")
    failed = [name for name, e in steps.items() if (e or {}).get("status") == "failed"]
    if failed:
        parts.append(f"{_plural(len(failed), 'step')} failed ({', '.join(failed)})")
    return ", ".join(parts) if parts else "nothing to improve"
