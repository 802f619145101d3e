"""Scope routing of extracted facts: a turn posted to a project space by a
key linked to a user space teaches two kinds of things. What is personal
(identity, preferences, people) follows the person to the user space; what
is about the work (conventions, decisions, tools) stays with the project.

Decided per candidate from its kind, predicate and subject, never from the
text: the same rules for the rule extractor and the LLM. What fits neither
stays in the project space, where the turn was posted: the user space only
gets what is clearly the person's, since every project linked to it reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.models import Space
from memory.services.graph import RELATIONSHIP_PREDICATES
from memory.services.pipeline.candidates import FUNCTIONAL_PREDICATES, Candidate
from memory.services.pipeline.rules import USER
from memory.services.pipeline.rules.project import PROJECT

# The work, whoever said it: tools, decisions, conventions, what is built.
PROJECT_PREDICATES = frozenset(
    {"uses", "decided", "convention", "project", "tool", "stack", "deploys", "builds_with"}
)
# Who the person is and who is in their life, whatever the subject's spelling.
PERSONAL_PREDICATES = (
    FUNCTIONAL_PREDICATES
    | RELATIONSHIP_PREDICATES
    | {
        "nickname",
        "from",
        "born_in",
        "diet",
        "allergic_to",
        "intolerant_to",
        "condition",
        "likes",
        "dislikes",
        "loves",
        "hates",
        "prefers",
        "avoids",
        "favorite",
        "graduated_from",
        "learning",
        "hobby",
    }
)


@dataclass
class Route:
    space: Space
    scope: str  # "user" or "project"
    candidates: list[Candidate] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)  # positions in the extracted list


def is_personal(c: Candidate) -> bool:
    if c.subject.casefold() == PROJECT.casefold() or c.predicate in PROJECT_PREDICATES:
        return False
    if c.kind == "preference" or c.predicate in PERSONAL_PREDICATES:
        return True
    if c.predicate.startswith("favorite_"):
        return True
    # The user's own life (events, plans, what they said of themselves).
    return c.subject == USER and c.kind != "instruction"


def split(candidates: list[Candidate], *, home: Space, user_space: Space | None) -> list[Route]:
    """The candidates grouped by the space they are written to: the project
    first, then the user space; one route, all of them, when unlinked."""
    project = Route(space=home, scope="project")
    if user_space is None:
        project.candidates = list(candidates)
        project.indexes = list(range(len(candidates)))
        return [project]
    user = Route(space=user_space, scope="user")
    for i, c in enumerate(candidates):
        route = user if is_personal(c) else project
        route.candidates.append(c)
        route.indexes.append(i)
    # The project route stays even when empty: the job's own space is
    # always locked and written to (its turn's audit trail).
    return [project, user] if user.candidates else [project]


def summary(routes: list[Route], *, home: Space, user_space: Space) -> dict[str, object]:
    """What the job result records: where each scope's facts went and which
    of the extracted candidates (by position) went there."""
    by_scope = {r.scope: r for r in routes}
    out: dict[str, object] = {}
    for scope, space in (("project", home), ("user", user_space)):
        route = by_scope.get(scope)
        out[scope] = {"space": space.name, "candidates": list(route.indexes) if route else []}
    return out


def linked_space(job_payload: dict[str, object], home: Space) -> Space | None:
    """The user space a turn job was accepted with (turns.accept_turns), if
    it is still a user space; a link removed since is simply not followed."""
    pk = job_payload.get("user_space")
    if not isinstance(pk, int) or pk == home.pk:
        return None
    return Space.objects.filter(pk=pk, kind=Space.Kind.USER).first()
