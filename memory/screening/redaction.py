"""Secrets in incoming text become `[REDACTED:kind]` before anything is stored
or sent to an LLM."""

from __future__ import annotations

import re

# --- secrets ------------------------------------------------------------------------

# Order matters: multi-line and structured secrets first, so a PEM body or a
# JWT is replaced whole before the generic assignment rule sees its pieces.
_SECRET_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("api_key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{20,}")),
    (
        "bearer_token",
        re.compile(r"(?i)(?<=\bbearer )\s*[A-Za-z0-9._~+/=-]{16,}"),
    ),
    (
        "aws_secret",
        re.compile(r"(?i)(?<=aws_secret_access_key)(\s*[=:]\s*)[A-Za-z0-9/+=]{30,}"),
    ),
]

# "password = hunter2", "api_key: abc", "my password is hunter2": the value is
# replaced, the key word is kept so the sentence still reads.
_ASSIGNMENT = re.compile(
    r"(?i)\b(?P<key>pass(?:word|wd|phrase)?|pwd|secret|client[_ -]?secret|token|"
    r"access[_ -]?token|api[_ -]?key|private[_ -]?key)"
    r"(?P<sep>\s*(?:[:=]|\bis\b)\s*)"
    r"(?P<q>[\"']?)(?P<value>[^\s\"',;]{4,})(?P=q)"
)
_REDACTED = re.compile(r"\[REDACTED:[a-z_]+\]")


def redact(text: str) -> str:
    """Replace secrets in `text` with `[REDACTED:kind]`."""
    if not text:
        return text
    for kind, pattern in _SECRET_PATTERNS:
        if kind == "aws_secret":
            text = pattern.sub(r"\1[REDACTED:aws_secret]", text)
        else:
            text = pattern.sub(f"[REDACTED:{kind}]", text)

    def assignment(m: re.Match[str]) -> str:
        value = m.group("value")
        if _REDACTED.search(value) or value.lower() in _NOT_A_SECRET:
            return m.group(0)
        kind = "password" if m.group("key").lower().startswith(("pass", "pwd")) else "secret"
        return f"{m.group('key')}{m.group('sep')}[REDACTED:{kind}]"

    return _ASSIGNMENT.sub(assignment, text)


# Words after "password is" that are prose, not a password.
_NOT_A_SECRET = frozenset(
    "the a an my your our their too very not wrong correct incorrect expired stored "
    "required missing empty saved changed reset set".split()
)
