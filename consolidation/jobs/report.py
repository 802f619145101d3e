"""Step 9: the report, one line a person reads in the Memory tab:
"+4 facts, merged 3, archived 7, 1 new insight, refined 1 belief". Built only
from the counts the steps recorded, so it always agrees with them; every
count of a change a step made to the database has a figure here, so a run
that changed something never reads "nothing to improve"."""

from __future__ import annotations

from typing import Any


def _count(steps: dict[str, Any], step: str, key: str) -> int:
    entry = steps.get(step) or {}
    return int((entry.get("counts") or {}).get(key, 0))


def figures(steps: dict[str, Any]) -> dict[str, int]:
    return {
        "facts": _count(steps, "promote", "promoted")
        + _count(steps, "compact_core", "facts_added"),
        "merged": _count(steps, "merge", "merged"),
        "contradictions": _count(steps, "merge", "contradictions"),
        "archived": _count(steps, "decay", "archived"),
        "expired": _count(steps, "decay", "expired"),
        "insights": _count(steps, "reflect", "insights"),
        "refined": _count(steps, "reflect", "refined"),
        "refuted": _count(steps, "reflect", "refuted"),
        "beliefs_merged": _count(steps, "reflect", "beliefs_merged"),
        "summaries": _count(steps, "summarize", "summarized"),
        "skill_drafts": _count(steps, "skills", "drafts"),
        "skills_used": _count(steps, "skills", "skills_used"),
        "reinforced": _count(steps, "skills", "reinforced"),
        "core_compacted": _count(steps, "compact_core", "compacted"),
        "core_demoted": _count(steps, "compact_core", "demoted"),
        "embedded": _count(steps, "reembed", "embedded"),
        "environment_drift": _count(steps, "environment", "drift"),
    }


# Each figure's phrase, in report order; {n} is the count, {s} the plural "s".
PHRASES = [
    ("facts", "+{n} fact{s}"),
    ("merged", "merged {n}"),
    ("contradictions", "resolved {n} contradiction{s}"),
    ("archived", "archived {n}"),
    ("expired", "expired {n} event{s}"),
    ("insights", "{n} new insight{s}"),
    ("refined", "refined {n} belief{s}"),
    ("refuted", "refuted {n} belief{s}"),
    ("beliefs_merged", "merged {n} belief{s}"),
    ("summaries", "summarized {n} session{s}"),
    ("skill_drafts", "{n} skill draft{s} to review"),
    ("reinforced", "reinforced {n} fact{s} used skills rely on"),
    ("core_compacted", "compacted {n} core block{s}"),
    ("core_demoted", "moved {n} core entr{ies} to long-term memory"),
    ("embedded", "embedded {n}"),
    ("environment_drift", "{n} environment change{s}"),
]


def build(steps: dict[str, Any]) -> str:
    f = figures(steps)
    parts = [
        phrase.format(n=f[key], s="" if f[key] == 1 else "s", ies="y" if f[key] == 1 else "ies")
        for key, phrase in PHRASES
        if f[key]
    ]
    failed = [name for name, e in steps.items() if (e or {}).get("status") == "failed"]
    if failed:
        s = "" if len(failed) == 1 else "s"
        parts.append(f"{len(failed)} step{s} failed ({', '.join(failed)})")
    return ", ".join(parts) if parts else "nothing to improve"
