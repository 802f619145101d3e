"""Step 1: the salience gate. No LLM: cheap rules decide which turns are worth
extracting from. Thresholds come from settings.ENGRAM."""

from __future__ import annotations

import re

from django.conf import settings

from memory.models import Turn

# Imperatives addressed to the agent ("open chrome", "run the tests"): they ask
# for an action now and say nothing lasting about the user.
_COMMAND = re.compile(
    r"^\s*(?:please\s+)?(?:open|close|run|start|stop|launch|kill|restart|show|list|play|pause|"
    r"search|find|google|install|uninstall|build|deploy|commit|push|pull|cd|ls|git|npm|pip|"
    r"sudo|make|docker|python|cat|grep|delete|remove|copy|move|rename|create|mkdir|"
    r"translate|summari[sz]e|explain|fix|continue|retry|undo|go|click|type|scroll)\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|my|me|we|our)\b", re.I)
# A short turn that states something about the user ("I'm vegan.", "I quit!",
# "my name's Jo") is worth reading however short it is.
_STATEMENT = re.compile(r"^\W*(?:i|i'm|i\u2019m|im|i've|i am|we|we're|we've|my|our)\s+\S+", re.I)
_CODE_LINE = re.compile(
    r"^\s*(?:[{}\[\]();<>#$]|def |class |import |from |function |const |let |var |SELECT |\d+\s*[|:])"
)


def _paste_dump(text: str) -> bool:
    if len(text) >= settings.ENGRAM["PASTE_DUMP_CHARS"]:
        return True
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 8:
        code_like = sum(1 for ln in lines if _CODE_LINE.match(ln) or ln.count("  ") > 3)
        if code_like / len(lines) >= 0.5:
            return True
    if "```" in text and len(text) > 400:
        fenced = sum(len(block) for block in text.split("```")[1::2])
        return fenced / len(text) > 0.6
    return False


def skip_reason(turn: Turn) -> str:
    """'' when the turn should be extracted from, else why it is skipped."""
    if turn.role != Turn.Role.USER:
        return "assistant"  # context for pronouns, never a fact source
    if turn.screen_status != "ok":
        return "quarantined"
    text = turn.text.strip()
    if len(text) < settings.ENGRAM["SALIENCE_MIN_CHARS"] and not _STATEMENT.match(text):
        return "short"
    if _paste_dump(text):
        return "paste"
    words = text.split()
    if len(words) <= 8 and _COMMAND.match(text) and not _FIRST_PERSON.search(text):
        return "command"
    return ""
