"""A messy multi-session space, the way a person's memory really fills up:
six sessions over two weeks in which a friend's name keeps opening
sentences, the same deploy routine is typed three ways (a fenced block,
"$" lines with other flags, plain prose), and the facts about one person are
stored under three spellings of her name. Turns are stored without running
the extractor, and the facts are written through the facts API, so what
consolidation makes of them does not depend on the extractor's coverage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.test import Client
from django.utils import timezone

from memory.models import Space

SESSIONS: list[list[tuple[str, str]]] = [
    [
        ("user", "Hi! Yesterday Priya and I went bouldering, my arms are dead."),
        ("assistant", "Sounds like a good session. Anything I can help with?"),
        (
            "user",
            "Yes, I'm publishing the blog:\n```bash\ngit pull\nnpm run build\n"
            "rsync -av dist/ web:/srv/blog\n```",
        ),
    ],
    [
        ("user", "Priya says the new wall at the gym is brutal."),
        (
            "user",
            "Blog again tonight.\n$ git pull --rebase\n$ npm run build\n$ rsync -avz dist/ web:/srv/blog",
        ),
        ("assistant", "Done? Did the build pass?"),
    ],
    [
        ("user", "What's a good stretch for forearms?"),
        ("assistant", "Try wrist flexor stretches, 30 seconds each side."),
    ],
    [
        ("user", "Priya wants to enter a competition in spring."),
        (
            "user",
            "I ran git pull, then npm run build, then rsync -av dist/ web:/srv/blog and it's live.",
        ),
    ],
    [
        ("user", "How long should I rest between climbing days?"),
    ],
    [
        ("user", "thanks, that helps"),
    ],
]

# (text, subject, predicate, object, kind): one person under three spellings,
# and the user under "user", "me" and their own name.
FACTS = [
    ("User's name is Maria", "user", "name", "Maria", "fact"),
    ("Anna lives in Lyon", "Anna", "lives_in", "Lyon", "fact"),
    ("anna works as a teacher", "anna", "role", "teacher", "fact"),
    ("Anna K. has a dog named Max", "Anna K.", "pet", "Max", "fact"),
    ("User likes hiking", "user", "likes", "hiking", "preference"),
    ("Maria likes jazz", "Maria", "likes", "jazz", "preference"),
    ("I dislike crowds", "me", "dislikes", "crowds", "preference"),
    (
        "User publishes a blog built with npm and copied to the web server with rsync",
        "user",
        "project",
        "blog",
        "fact",
    ),
]

LATER_FACT = ("Anna plays the cello", "Anna", "plays", "cello", "fact")


@dataclass
class Life:
    space: Space
    now: datetime
    fact_ids: dict[str, int]


def post_fact(api: Client, text: str, subject: str, predicate: str, obj: str, kind: str) -> int:
    r = api.post(
        "/api/v1/memory/facts",
        {"text": text, "subject": subject, "predicate": predicate, "object": obj, "kind": kind},
        content_type="application/json",
    )
    assert r.status_code in (200, 201), r.content
    return int(r.json()["id"])


def build(space: Space, api: Client) -> Life:
    now = timezone.now()
    turns = []
    for n, session in enumerate(SESSIONS):
        ts = now - timedelta(days=14 - 2 * n)
        for i, (role, text) in enumerate(session):
            turns.append(
                {
                    "session_id": f"life-{n}",
                    "role": role,
                    "ref": f"life-{n}-{i}",
                    "ts": (ts + timedelta(minutes=i)).isoformat(),
                    "text": text,
                }
            )
    r = api.post("/api/v1/turns/batch", {"turns": turns}, content_type="application/json")
    assert r.status_code == 202, r.content
    ids = {f[0]: post_fact(api, *f) for f in FACTS}
    return Life(space=space, now=now, fact_ids=ids)
