"""What a turn says about the project rather than the person: the tools a
repository uses, the decisions the team took, its conventions. The subject
is "Project", so scope routing (pipeline.routing) keeps these in the project
space while what the user says about themselves follows them to their own.

Tried only on a clause that no personal pattern and no event matched: the
personal extractor stays exactly as precise as it was."""

from __future__ import annotations

import re

from memory.services.pipeline.candidates import Candidate

PROJECT = "Project"

_THE_PROJECT = r"(?:this|the|our) (?:repo(?:sitory)?|project|codebase|code base|app|service|team)"
_TOOL = r"(?P<tool>[\w.+#/-]+(?: [A-Z][\w.+#-]*)?)"

_USES = re.compile(
    rf"^(?:{_THE_PROJECT}|we) (?:uses?|is using|are using|runs on|is built with|build with)"
    rf" {_TOOL}(?: (?:for|as|to) (?P<purpose>[\w -]{{2,60}}))?$",
    re.I,
)
_DECIDED = re.compile(
    r"^(?:we|the team|" + _THE_PROJECT + r")(?: have| has)? (?:decided|agreed) (?P<how>to|that|on) "
    r"(?P<what>.{3,200})$",
    re.I,
)
_CONVENTION = re.compile(
    r"^(?:our|the|" + _THE_PROJECT + r"'s) convention is (?:to |that )?(?P<what>.{3,200})$",
    re.I,
)


def facts(clause: str) -> list[Candidate]:
    clause = clause.strip().rstrip(".!")
    m = _USES.match(clause)
    if m:
        tool = m.group("tool")
        purpose = f" for {m.group('purpose')}" if m.group("purpose") else ""
        return [
            Candidate(
                text=f"The project uses {tool}{purpose}",
                subject=PROJECT,
                predicate="uses",
                object=tool,
                importance=0.6,
            )
        ]
    m = _DECIDED.match(clause)
    if m:
        what = m.group("what")
        return [
            Candidate(
                text=f"The team decided {m.group('how').lower()} {what}",
                subject=PROJECT,
                predicate="decided",
                object=what,
                importance=0.6,
            )
        ]
    m = _CONVENTION.match(clause)
    if m:
        what = m.group("what")
        return [
            Candidate(
                text=f"Project convention: {what}",
                kind="instruction",
                subject=PROJECT,
                predicate="convention",
                object=what,
                importance=0.6,
            )
        ]
    return []
