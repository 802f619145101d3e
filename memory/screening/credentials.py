"""Credentials: keys and tokens with a recognisable shape, passwords in URLs
and headers, and values assigned to a key whose name says it is secret.

Shapes are anchored on the vendor's own prefix (`sk_live_`, `glpat-`,
`AKIA`...) wherever there is one; a bare high-entropy string is only taken
for a secret next to words that say so, because hashes, UUIDs, git SHAs and
base64 data look the same.
"""

from __future__ import annotations

import base64
import binascii
import re

from memory.screening.rules import MARKER, Rule, checked, rule

# Not preceded by a character a token could continue with.
_B = r"(?<![A-Za-z0-9_-])"
# Not followed by one.
_E = r"(?![A-Za-z0-9_-])"

# --- recognisable shapes -----------------------------------------------------------


def _mixed(value: str) -> bool:
    """Random-looking: letters and digits in one run of at least 16, the way
    generated keys are and `sk-learn-linear-models` slugs are not."""
    return any(
        len(part) >= 16 and re.search(r"\d", part) and re.search(r"[A-Za-z]", part)
        for part in re.split(r"[-_]", value)
    )


def _upper_or_digit(value: str) -> bool:
    return bool(re.search(r"[A-Z0-9]", value[3:]))


SHAPES: list[Rule] = [
    rule(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S,
    ),
    rule("private_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    rule(
        "aws_key",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)"
        r"[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    rule(
        "aws_session_token",
        r"(?<![A-Za-z0-9+/])(?:FwoGZXIvYXdzE|FQoGZXIvYXdzE|IQoJb3JpZ2luX2Vj|IQoDYXdzE)"
        r"[A-Za-z0-9+/=]{40,}",
    ),
    rule("github_token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    rule(
        "gitlab_token",
        _B + r"(?:(?:glpat|gldt|glrt|glptt|glsoat|glcbt|glimt|glft|glagent|glwt|gloas)-"
        r"[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})",
    ),
    rule("slack_token", _B + r"(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"),
    rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{20,})",
        find=checked("slack_webhook", lambda v: True, 1),
    ),
    rule(
        "stripe_key", _B + r"(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"
    ),
    rule("google_api_key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}" + _E),
    rule(
        "google_oauth",
        _B + r"(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{40,})",
    ),
    rule(
        "azure_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey|"
        r"PrimaryConnectionString|SharedAccessSignature)\s*=\s*([A-Za-z0-9+/%]{20,}={0,2})",
        find=checked("azure_key", lambda v: True, 1),
    ),
    rule(
        "azure_key",
        r"[?&]sig=([A-Za-z0-9%+/=]{20,})",
        find=checked("azure_key", lambda v: True, 1),
    ),
    # Entra ID (Azure AD) client secrets: three characters, a digit, "Q~".
    rule(
        "azure_key",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
    ),
    rule(
        "huggingface_token",
        _B + r"hf_[A-Za-z0-9]{30,}" + _E,
        find=checked("huggingface_token", _upper_or_digit),
    ),
    rule("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    rule("pypi_token", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    rule("sendgrid_key", _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E),
    rule("twilio_key", r"(?<![A-Za-z0-9])(?:AC|SK)[0-9a-f]{32}(?![A-Za-z0-9])"),
    rule("anthropic_key", _B + r"sk-ant-(?:api|admin|sid|oat)\d{2}-[A-Za-z0-9_-]{32,}"),
    rule(
        "openai_key",
        _B + r"sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,}",
        find=checked("openai_key", lambda v: _mixed(v[3:])),
    ),
    rule(
        "service_token",
        _B + r"(?:shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|dapi[a-f0-9]{32}"
        r"|hv[sbr]\.[A-Za-z0-9_-]{24,}|key-[0-9a-f]{32}|lin_api_[A-Za-z0-9]{40}"
        r"|glsa_[A-Za-z0-9_]{32,}|glc_[A-Za-z0-9+/=]{32,}|ATATT3[A-Za-z0-9_=-]{100,}"
        r"|dp\.pt\.[A-Za-z0-9]{40,}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|NRAK-[A-Z0-9]{27}"
        r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|sntrys_[A-Za-z0-9+/=_]{40,}|ntn_[A-Za-z0-9]{40,})",
    ),
    rule("service_token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E),  # Telegram bots
    rule(
        "service_token",
        r"discord(?:app)?\.com/api/webhooks/\d+/([A-Za-z0-9_-]{60,})",
        find=checked("service_token", lambda v: True, 1),
    ),
]

# --- AWS secrets, which have no prefix ---------------------------------------------

_AWS_CONTEXT = re.compile(r"(?i)aws|secret|\bA[KS]IA[A-Z0-9]{16}")


def _aws_secret(m: re.Match[str]) -> tuple[int, int, str] | None:
    value = m.group(0)
    if not (re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)):
        return None  # hex digests, upper-case ids
    if not re.search(r"[0-9/+]", value):
        return None
    before = m.string[max(0, m.start() - 200) : m.start()]
    if not _AWS_CONTEXT.search(before):
        return None
    return m.start(), m.end(), "aws_secret"


AWS: list[Rule] = [
    rule(
        "aws_session_token",
        r"(?i)(?:aws_?session_?token|session_?token|security_?token|x-amz-security-token)"
        r"[\"']?\s*(?:[:=]|=>)\s*[\"']?([A-Za-z0-9+/=]{40,})",
        find=checked("aws_session_token", lambda v: True, 1),
    ),
    Rule(
        kinds=("aws_secret",),
        pattern=re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        find=_aws_secret,
    ),
]

# --- passwords in URLs and headers ---------------------------------------------------

DB_SCHEMES = frozenset(
    "postgres postgresql postgis mysql mysql2 mariadb mongodb mongodb+srv redis rediss "
    "amqp amqps mssql sqlserver oracle cockroachdb clickhouse cassandra couchdb neo4j "
    "neo4j+s bolt memcached elasticsearch influxdb db2 snowflake timescaledb".split()
)


def _url_password(m: re.Match[str]) -> tuple[int, int, str] | None:
    start, end = m.span("pw")
    if _placeholder(m.group("pw")):
        return None
    scheme = m.group("scheme").lower().removeprefix("jdbc:")
    kind = (
        "db_password"
        if scheme.split("+")[0] in DB_SCHEMES or scheme in DB_SCHEMES
        else "url_password"
    )
    return start, end, kind


def _basic(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = decoded.decode("utf-8", errors="replace")
    return ":" in text and text.isprintable()


HEADERS: list[Rule] = [
    Rule(
        kinds=("db_password", "url_password"),
        pattern=re.compile(
            r"(?i)(?<![a-z0-9+.-])(?P<scheme>(?:jdbc:)?[a-z][a-z0-9+.-]*)://(?P<user>[^\s:/@]*):"
            r"(?P<pw>(?:[^\s/@]|@(?=[^\s/]*@))+)@(?P<host>[^\s/@:?#]+)"
        ),
        find=_url_password,
    ),
    rule(
        "basic_auth",
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
        find=checked("basic_auth", _basic, 1),
    ),
    rule(
        "bearer_token",
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})",
        find=checked("bearer_token", lambda v: True, 1),
    ),
    rule(
        "bearer_token",
        r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:token|bot|apikey|key)\s+([A-Za-z0-9._~+/=-]{16,})",
        find=checked("bearer_token", lambda v: True, 1),
    ),
    rule(
        "password",
        r"(?<!\S)(?:-u|--user)\s+[\"']?[^\s:\"']+:([^\s\"']+)",
        find=checked("password", lambda v: not _placeholder(v), 1),
    ),
]

# --- key = value -------------------------------------------------------------------

_KEYWORD = re.compile(
    r"(?i)(?:pass(?:word|wd|phrase|code)?|pwd|pw|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|auth[_-]?key|subscription[_-]?key|master[_-]?key|"
    r"signing[_-]?key|encryption[_-]?key|credentials?)$"
)

# Words that, after "password is" or "secret:", make prose rather than a value.
_PROSE = frozenset(
    """the a an my your our their his her its this that these those it is was be been
    not no too very so also just only still now then here there in on at of for to
    with by from as and or but if when which what who how where why same one
    wrong correct incorrect invalid valid expired stored required missing empty saved
    changed reset set unset hidden shown secure safe strong weak long short simple
    easy hard good bad new old different ok okay fine available unavailable needed
    optional mandatory encrypted hashed rotated revoked generated provided below above
    attached included sent patience key""".split()
)
_PLACEHOLDER = re.compile(
    r"""(?ix)^(?:
        (?-i:\$[A-Z_][A-Z0-9_]*) | \$\{[^}]+\}   # $VAR, ${VAR}
      | %\(\w+\)s | \{\{.*\}\} | \{\w*\} | <[^>]*> | \[[^\]]*\]
      | [*x•.#_-]{3,}               # ***, xxxx, ...
      | null | none | nil | true | false | undefined | empty | redacted | hidden
      | masked | changeme | required | optional | string | str | int | env
      | your[_-]\w* | my[_-]\w* | example(?:[_-]\w*)? | placeholder | todo | tbd | n/?a
    )$"""
)
_CODE_REF = re.compile(
    r"(?i)^(?:os|process|settings|config|conf|env|secrets?|self|this|vault|params|ctx|"
    r"request|args|options|props|import)\.[\w.\[\]'\"]+$"
)


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value)) or bool(MARKER.search(value))


def key_kind(key: str) -> str | None:
    """The kind a key name stands for, or None if it is not a secret's name.
    The keyword must end the name and start a word in it, so `DB_PASSWORD`,
    `clientSecret` and `x-api-key` count and `bypass`, `max_tokens`,
    `password_length` do not."""
    m = _KEYWORD.search(key)
    if m is None:
        return None
    before = key[: m.start()]
    if (
        before
        and before[-1] not in "_.-"
        and not (m.group(0)[0].isupper() and before[-1].islower())
    ):
        if not before.isupper():  # PGPASSWORD, MYSQLPWD
            return None
    word = m.group(0).lower()
    return "password" if word.startswith(("pass", "pw")) else "secret"


def looks_secret(value: str, *, mode: str, followed_by: str = "") -> bool:
    """Whether an assigned value is a secret. `mode` is how it was assigned:
    "quoted" (`"password": "..."`), "assign" (`=`), "colon" (an unquoted
    `:`, where a sentence may go on) or "is" (prose). So "the password is
    required", "The secret is patience" and "secret: patience is key" keep
    their words, while "password is hunter2" and "password: hunter" do not."""
    if not value or _placeholder(value) or _CODE_REF.match(value):
        return False
    if mode != "quoted" and (followed_by[:1] in ("(", "[") or value.lower() in _PROSE):
        return False  # a call, a subscript or a word of a sentence
    if re.fullmatch(r"![A-Za-z]+", value) and followed_by[:1] == " ":
        return False  # a YAML tag (!vault, !Ref, !env) naming where the value is
    plain = re.fullmatch(r"[A-Za-z][a-z]*", value) is not None
    if mode == "is":
        return len(value) >= 4 and not plain
    if mode == "colon":
        return len(value) >= 4 and not (plain and re.match(r"[ \t]+[A-Za-z]", followed_by))
    return mode == "quoted" or len(value) >= 3


def _assignment(m: re.Match[str]) -> tuple[int, int, str] | None:
    kind = key_kind(m.group("key"))
    if kind is None:
        return None
    sep = " ".join(m.group("sep").lower().split())
    if m.group("qv") is not None:
        mode, group = "quoted", "qv"
    else:
        group = "v"
        mode = "is" if sep[:2] in ("is", "wa") else "colon" if sep == ":" else "assign"
    start, end = m.span(group)
    value = m.group(group)
    if mode in ("is", "colon"):
        value = value.rstrip(".!?,;:)")
    elif mode == "assign":
        value = value.rstrip(".)")
    end = start + len(value)
    if not looks_secret(value, mode=mode, followed_by=m.string[end : end + 40]):
        return None
    return start, end, kind


ASSIGNMENTS: list[Rule] = [
    Rule(
        kinds=("password", "secret"),
        pattern=re.compile(
            r"(?P<key>(?<![A-Za-z0-9_./-])[A-Za-z0-9_.-]{0,60}?"
            r"(?i:pass(?:word|wd|phrase|code)?|pwd|pw|secret|token|api[_-]?key|apikey|"
            r"access[_-]?key|private[_-]?key|auth[_-]?key|subscription[_-]?key|master[_-]?key|"
            r"signing[_-]?key|encryption[_-]?key|credentials?))(?![A-Za-z0-9])(?:\\?[\"'])?"
            r"(?P<sep>\s*(?::=|=>|[:=])\s*|\s+(?i:is|was)\s+(?:(?i:set\s+to|now)\s+)?)"
            r"(?:(?P<q>\\?[\"'`])(?P<qv>[^\"'`\n]{1,300})(?P=q)|(?P<v>[^\s\"'`,;&<>(){}\[\]]{1,300}))"
        ),
        find=_assignment,
    ),
    # Command-line flags: --password hunter2, --api-key=abc.
    rule(
        "password",
        r"(?<!\S)--(?:[a-z]+-)?(?:password|passwd|pass|pwd)(?:=|\s+)[\"']?([^\s\"'-][^\s\"']*)",
        find=checked("password", lambda v: not _placeholder(v), 1),
    ),
    rule(
        "secret",
        r"(?<!\S)--(?:[a-z]+-)?(?:token|secret|api-key|apikey|access-key|auth-token)(?:=|\s+)"
        r"[\"']?([^\s\"'-][^\s\"']*)",
        find=checked("secret", lambda v: not _placeholder(v), 1),
    ),
    # Other languages: Passwort: ..., mot de passe : ..., contraseña: ..., пароль: ...
    rule(
        "password",
        r"(?i)\b(?:passwort|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha|parola\s+d'ordine|"
        r"wachtwoord|has[łl]o|пароль|パスワード|비밀번호|كلمة\s+المرور|पासवर्ड)"
        r"\s*(?:[:：=]|\s(?:ist|est|es|é|является|は|है)\s)\s*[\"']?([^\s\"'，。,;；]+)",
        find=checked(
            "password", lambda v: not _placeholder(v) and bool(re.search(r"[\d\W_]", v)), 1
        ),
    ),
    # Chinese: 密码：hunter2, 密码是hunter2, 口令为...
    rule(
        "password",
        r"(?:密码|密碼|口令|登录密码|支付密码|秘钥|密钥|令牌)\s*(?:[:：=]|是|为|為)\s*"
        r"([^\s，。,;；、）)]+)",
        find=checked("password", lambda v: not _placeholder(v), 1),
    ),
]

RULES: list[Rule] = SHAPES + AWS + HEADERS + ASSIGNMENTS
