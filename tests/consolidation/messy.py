"""A deliberately messy space, shared by the consolidation tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.test import Client
from django.utils import timezone

from memory.models import MemoryItem, Space
from memory.services import core

LINES = [
    "Name: Dana Whitfield, goes by Dana",
    "Works as a marine biologist at the Monterey aquarium",
    "Prefers answers with code first, then a short explanation",
    "Lives with two cats named Miso and Tofu",
    "Allergic to peanuts and shellfish",
    "Favourite editor is Neovim with the lazy.nvim plugin manager",
    "Runs Arch Linux on a ThinkPad X1 Carbon",
    "Speaks English, Spanish and some Portuguese",
    "Timezone is Pacific time, usually online 8am to 6pm",
    "Does not like emojis in replies",
    "Is training for a half marathon in October",
    "Plays cello in a community orchestra on Thursdays",
    "Prefers metric units except for body weight",
    "Partner is called Sam, a nurse working night shifts",
    "Uses fish shell and tmux for every terminal session",
    "Keeps notes in Obsidian synced with git",
    "Drinks oolong tea, never coffee after noon",
    "Wants reminders phrased as questions rather than orders",
    "Birthday is the twelfth of March",
    "Studied oceanography in Lisbon",
]


_WORDS = "atlas beacon cinder drift ember fjord glacier harbor islet juniper kelp lagoon".split()


def _project_line(n: int) -> str:
    a, b = _WORDS[n % len(_WORDS)], _WORDS[(n // len(_WORDS) + n + 1) % len(_WORDS)]
    return f"Maintains the {a}-{b}-{n} repository and reviews its pull requests"


@dataclass
class Messy:
    space: Space
    now: datetime
    duplicates: list[int]
    stale_fact: int
    old_event: int
    old_belief_evidence: list[int]
    contradiction_old: int
    contradiction_new: int


def item(space: Space, text: str, **kw: object) -> MemoryItem:
    return MemoryItem.objects.create(space=space, text=text, **kw)


def fill_core(space: Space, *, target: float = 0.95) -> float:
    block = core.get_block(space=space, label="user")
    lines: list[str] = []
    i = 0
    while True:
        line = LINES[i] if i < len(LINES) else _project_line(i - len(LINES))
        candidate = "\n".join([*lines, line])
        block.text = candidate
        if core.usage(block=block) > target:
            break
        lines.append(line)
        i += 1
    # The same line twice, reworded only in case: a densify target.
    lines.append(lines[0].upper())
    block = core.set_text(space=space, label="user", text="\n".join(lines), author="test")
    return core.usage(block=block)


def post_sessions(api: Client, now: datetime) -> None:
    """Three sessions over three days that all bring up the pottery class,
    which no fact records; plus a repeated deploy workflow."""
    days = [3, 2, 1]
    turns = []
    for n, d in enumerate(days):
        ts = now - timedelta(days=d)
        sid = f"s{n}"
        turns += [
            {
                "session_id": sid,
                "role": "user",
                "ref": f"{sid}-1",
                "ts": ts.isoformat(),
                "text": f"Tonight I have my pottery class again, week {n + 2} of the course.",
            },
            {
                "session_id": sid,
                "role": "assistant",
                "ref": f"{sid}-2",
                "ts": (ts + timedelta(minutes=1)).isoformat(),
                "text": "Have fun! What are you making this week?",
            },
            {
                "session_id": sid,
                "role": "user",
                "ref": f"{sid}-3",
                "ts": (ts + timedelta(minutes=2)).isoformat(),
                "text": "Before that I deploy the site:\n$ git pull\n$ make test\n$ make deploy",
            },
        ]
    r = api.post("/api/v1/turns/batch", {"turns": turns}, content_type="application/json")
    assert r.status_code == 202, r.content


def build(space: Space, api: Client) -> Messy:
    now = timezone.now()
    post_sessions(api, now)
    old = now - timedelta(days=200)
    dups = [
        item(
            space,
            "User loves hiking in the mountains on weekends",
            subject="user",
            predicate="likes",
            object="hiking",
            kind="preference",
            importance=0.6,
        ),
        item(
            space,
            "User loves hiking in the mountains on weekends.",
            subject="user",
            predicate="likes",
            object="hiking",
            kind="preference",
            importance=0.5,
        ),
        item(
            space,
            "The user loves hiking in the mountains on the weekends",
            kind="preference",
            importance=0.5,
        ),
    ]
    stale = item(
        space,
        "User once looked up the opening hours of a hardware store",
        importance=0.2,
        last_seen=old,
        created_at=old,
    )
    event = item(
        space,
        "User had a dentist appointment",
        kind="event",
        importance=0.5,
        valid_from=old,
        created_at=old,
        last_seen=old,
    )
    lisbon = item(
        space,
        "User lives in Lisbon",
        subject="user",
        predicate="lives_in",
        object="Lisbon",
        importance=0.7,
        valid_from=now - timedelta(days=30),
        created_at=now - timedelta(days=30),
    )
    berlin = item(
        space,
        "User lives in Berlin",
        subject="user",
        predicate="lives_in",
        object="Berlin",
        importance=0.7,
        valid_from=now - timedelta(days=2),
        created_at=now - timedelta(days=2),
    )
    evidence = [
        item(space, "Dana plays cello in a community orchestra", subject="Dana", importance=0.6),
        item(space, "Dana practises cello every evening", subject="Dana", importance=0.6),
        item(space, "Dana bought a new cello bow", subject="Dana", kind="event", importance=0.5),
    ]
    return Messy(
        space=space,
        now=now,
        duplicates=[d.pk for d in dups],
        stale_fact=stale.pk,
        old_event=event.pk,
        old_belief_evidence=[e.pk for e in evidence],
        contradiction_old=lisbon.pk,
        contradiction_new=berlin.pk,
    )
