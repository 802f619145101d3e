"""Generate the redaction corpus: secrets and personal data of every kind in
sentences, JSON, env files, URLs, logs and other languages, and look-alikes
that must be left alone (UUIDs, digests, git SHAs, base64, versions, ids
whose check digit is wrong, prose about passwords).

    python -m memory.evaluation.redaction_corpus

writes tests/data/redaction_corpus.jsonl (seed 17, the "main" contexts) and
tests/data/redaction_heldout.jsonl (another seed and contexts the main set
never uses). Values are random, check digits computed, so the corpus tests
the shapes, not a list of strings. One JSON object a line:
{"text", "kind", "values"} for a secret (every value must be gone after
redaction), {"text", "kind": "lookalike:<what>", "values": []} for a
look-alike (the text must come back unchanged).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

from memory.screening import checksums

ROOT = Path(__file__).resolve().parents[2] / "tests" / "data"
MAIN = ROOT / "redaction_corpus.jsonl"
HELDOUT = ROOT / "redaction_heldout.jsonl"

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random, with at least one upper, one lower and one digit (as
    generated keys have), so the value is not a word by chance."""
    while True:
        v = _s(rng, alphabet, n)
        if (
            any(c.isupper() for c in v)
            and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)
        ):
            return v


FIRST = "alice bob carol dmitri eva farid grace hiro ines jamal kofi lena mateo nina omar priya quentin rosa sven tariq ursula vikram wen xenia yusuf zoe".split()
LAST = "smith garcia muller dubois sharma wang okafor rossi kowalski nguyen silva haddad ito berg novak".split()
DOMAINS = "example.com mail.example.org acme.io corp.example.co.uk uni-heidelberg.de orange.fr gmail.com proton.me company.in startup.dev sub.mail.example.net".split()
WORDS = "sunset river copper maple falcon orbit velvet cobalt harbor juniper nimbus quartz".split()


def password(rng: random.Random) -> str:
    shapes = [
        lambda: rng.choice(WORDS).capitalize() + str(rng.randint(10, 9999)) + rng.choice("!#$%*?"),
        lambda: _mixed(rng, ALNUM + "!#%*+=_-", rng.randint(10, 20)),
        lambda: rng.choice(WORDS) + rng.choice("_-.") + rng.choice(WORDS) + str(rng.randint(1, 99)),
        lambda: "P@" + _mixed(rng, ALNUM, 8),
        lambda: _s(rng, string.ascii_lowercase, 4) + str(rng.randint(1000, 99999)),
    ]
    return rng.choice(shapes)()


def url_password(rng: random.Random) -> str:
    return rng.choice(
        [
            lambda: _mixed(rng, ALNUM + "._~-", rng.randint(10, 24)),
            lambda: rng.choice(WORDS) + "%40" + str(rng.randint(100, 999)),
            lambda: _mixed(rng, ALNUM, 16) + "!$*",
        ]
    )()


def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = part({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    body = part({"sub": str(rng.randint(1, 10**9)), "name": rng.choice(FIRST), "iat": 1700000000})
    sig = base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip("=")
    return f"{head}.{body}.{sig}"


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + _s(rng, string.digits, length - len(prefix) - 1)
    for d in string.digits:
        if checksums.luhn(body + d):
            return body + d
    raise AssertionError("unreachable")


def _card(rng: random.Random) -> tuple[str, str]:
    network = rng.choice(["visa", "mc", "mc2", "amex", "discover", "jcb", "unionpay"])
    prefix, length = {
        "visa": ("4", 16),
        "mc": (str(rng.randint(51, 55)), 16),
        "mc2": (str(rng.randint(2221, 2720)), 16),
        "amex": (rng.choice(["34", "37"]), 15),
        "discover": ("6011", 16),
        "jcb": (str(rng.randint(3528, 3589)), 16),
        "unionpay": ("62", 16),
    }[network]
    digits = _luhn_complete(prefix, length, rng)
    sep = rng.choice(["", " ", "-"])
    if length == 15:
        shown = sep.join([digits[:4], digits[4:10], digits[10:]]) if sep else digits
    else:
        shown = sep.join(digits[i : i + 4] for i in range(0, 16, 4)) if sep else digits
    return shown, digits


def _iban(rng: random.Random) -> str:
    country = rng.choice(["DE", "GB", "FR", "ES", "IT", "NL", "CH", "BE", "PL", "AT", "IE", "PT"])
    n = checksums.IBAN_LENGTHS[country] - 4
    if country in ("GB", "NL", "IE"):
        bban = _s(rng, string.ascii_uppercase, 4) + _s(rng, string.digits, n - 4)
    elif country == "IT":
        bban = rng.choice(string.ascii_uppercase) + _s(rng, string.digits, n - 1)
    else:
        bban = _s(rng, string.digits, n)
    number = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    code = f"{country}{98 - number % 97:02d}{bban}"
    assert checksums.iban(code)
    if rng.random() < 0.6:
        return " ".join(code[i : i + 4] for i in range(0, len(code), 4))
    return code


def _ssn(rng: random.Random) -> str:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def _cn_id(rng: random.Random) -> str:
    region = rng.choice(["110105", "310104", "440305", "510107", "330106", "420111"])
    body = f"{region}{rng.randint(1950, 2010)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 999):03d}"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    check = "10X98765432"[sum(int(body[i]) * w for i, w in enumerate(weights)) % 11]
    return body + check


def _aadhaar(rng: random.Random) -> str:
    while True:
        digits = str(rng.randint(2, 9)) + _s(rng, string.digits, 11)
        if checksums.verhoeff(digits):
            return " ".join([digits[:4], digits[4:8], digits[8:]])


def _nino(rng: random.Random) -> str:
    first, second = "ABCEGHJKLMNOPRSTWXYZ", "ABCEGHJKLMNPRSTWXYZ"
    while True:
        prefix = rng.choice(first) + rng.choice(second)
        if prefix not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
            break
    d = _s(rng, string.digits, 6)
    if rng.random() < 0.5:
        return f"{prefix} {d[:2]} {d[2:4]} {d[4:]} {rng.choice('ABCD')}"
    return f"{prefix}{d}{rng.choice('ABCD')}"


def _pan(rng: random.Random) -> str:
    return (
        _s(rng, string.ascii_uppercase, 3)
        + rng.choice("PCHFATBLJG")
        + rng.choice(string.ascii_uppercase)
        + _s(rng, string.digits, 4)
        + rng.choice(string.ascii_uppercase)
    )


def _fr_nir(rng: random.Random) -> str:
    body = f"{rng.randint(1, 2)}{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 95):02d}{rng.randint(1, 999):03d}{rng.randint(1, 999):03d}"
    key = 97 - int(body) % 97
    if rng.random() < 0.5:
        return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:]} {key:02d}"
    return f"{body}{key:02d}"


def _phone(rng: random.Random) -> str:
    d = lambda n: _s(rng, string.digits, n)  # noqa: E731
    nz = lambda: str(rng.randint(2, 9))  # noqa: E731
    return rng.choice(
        [
            lambda: f"+1 {nz()}{d(2)} {nz()}{d(2)} {d(4)}",
            lambda: f"+1-{nz()}{d(2)}-{nz()}{d(2)}-{d(4)}",
            lambda: f"({nz()}{d(2)}) {nz()}{d(2)}-{d(4)}",
            lambda: f"{nz()}{d(2)}-{nz()}{d(2)}-{d(4)}",
            lambda: f"{nz()}{d(2)}.{nz()}{d(2)}.{d(4)}",
            lambda: f"+44 20 {d(4)} {d(4)}",
            lambda: f"+44 7{d(3)} {d(6)}",
            lambda: f"07{d(3)} {d(6)}",
            lambda: f"020 {d(4)} {d(4)}",
            lambda: f"+49 30 {d(8)}",
            lambda: f"+49 15{d(1)} {d(8)}",
            lambda: f"030 {d(8)}",
            lambda: f"089/{d(7)}",
            lambda: f"0151 {d(8)}",
            lambda: f"+33 {rng.randint(1, 9)} {d(2)} {d(2)} {d(2)} {d(2)}",
            lambda: f"0{rng.randint(1, 9)} {d(2)} {d(2)} {d(2)} {d(2)}",
            lambda: f"0{rng.randint(6, 7)}.{d(2)}.{d(2)}.{d(2)}.{d(2)}",
            lambda: f"+91 {rng.randint(6, 9)}{d(4)} {d(5)}",
            lambda: f"+91-{rng.randint(6, 9)}{d(9)}",
            lambda: f"0{rng.randint(6, 9)}{d(4)} {d(5)}",
            lambda: f"{rng.randint(6, 9)}{d(4)} {d(5)}",
            lambda: f"+86 13{d(1)} {d(4)} {d(4)}",
            lambda: f"1{rng.randint(3, 9)}{d(9)}",
            lambda: f"+{rng.choice(['34', '39', '31', '81', '61', '55'])}{d(9)}",
        ]
    )()


# kind -> maker of (snippet, secret values). A snippet is the secret with the
# words that naturally come with it ("Authorization: Basic ...").
Maker = Callable[[random.Random], tuple[str, list[str]]]


def _one(fn: Callable[[random.Random], str], *shapes: str) -> Maker:
    def make(rng: random.Random) -> tuple[str, list[str]]:
        v = fn(rng)
        return rng.choice(shapes).replace("{v}", v), [v]

    return make


def _pw_assign(rng: random.Random) -> tuple[str, list[str]]:
    v = password(rng)
    shape = rng.choice(
        [
            "password={v}",
            "password: {v}",
            '"password": "{v}"',
            "'passwd': '{v}'",
            "DB_PASSWORD={v}",
            "POSTGRES_PASSWORD: {v}",
            "my password is {v}",
            "the wifi password is {v}",
            "pwd = '{v}'",
            "--password {v}",
            "--db-password={v}",
            "curl -u admin:{v} https://api.example.com",
            "密码：{v}",
            "登录密码是{v}",
            "Passwort: {v}",
            "mot de passe : {v}",
            'adminPassword = "{v}"',
            "PGPASSWORD={v} psql -h db",
            "passphrase: {v}",
            "<password>{v}</password>",
        ]
    )
    if shape == "<password>{v}</password>":
        shape = "password = {v}"
    if shape in ("Passwort: {v}", "mot de passe : {v}") and not any(c.isdigit() for c in v):
        v += "7"
    return shape.format(v=v), [v]


def _secret_assign(rng: random.Random) -> tuple[str, list[str]]:
    v = _mixed(rng, ALNUM + rng.choice(["", "_-", "+/"]), rng.randint(16, 48))
    shape = rng.choice(
        [
            "client_secret={v}",
            '"client_secret": "{v}"',
            "SECRET_KEY = '{v}'",
            "api_key: {v}",
            "X-Api-Key: {v}",
            "x-auth-token: {v}",
            "https://api.example.com/v2/search?q=shoes&access_token={v}&page=2",
            "API_TOKEN={v}",
            '{{"apiKey": "{v}"}}',
            "webhookSecret: '{v}'",
            "ENCRYPTION_KEY={v}",
            "auth_token => '{v}'",
            "--api-key {v}",
            'token = "{v}"',
            "TWILIO_AUTH_TOKEN=" + _s(rng, HEX, 32),
        ]
    )
    if shape.startswith("TWILIO"):
        return shape, [shape.split("=", 1)[1]]
    return shape.format(v=v), [v]


def _db_url(rng: random.Random) -> tuple[str, list[str]]:
    pw = url_password(rng)
    scheme = rng.choice(
        [
            "postgres",
            "postgresql",
            "mysql",
            "mongodb+srv",
            "redis",
            "amqp",
            "mssql",
            "mariadb",
            "rediss",
        ]
    )
    user = rng.choice(["app", "admin", "root", "svc_reporting", "", "deploy"])
    host = rng.choice(
        [
            "db.internal",
            "10.0.3.12",
            "cluster0.ab12c.mongodb.net",
            "localhost",
            "pg-prod.eu-west-1.rds.amazonaws.com",
        ]
    )
    port = rng.choice(["", ":5432", ":3306", ":6379", ":5672"])
    return f"{scheme}://{user}:{pw}@{host}{port}/{rng.choice(['prod', 'app', '0', 'analytics'])}", [
        pw
    ]


def _url_auth(rng: random.Random) -> tuple[str, list[str]]:
    pw = url_password(rng)
    scheme = rng.choice(["https", "http", "ftp", "sftp", "smtp", "git+https"])
    user = rng.choice(FIRST)
    return (
        f"{scheme}://{user}:{pw}@{rng.choice(['files.example.com', 'git.example.org', 'mail.acme.io'])}/{rng.choice(['repo.git', 'inbox', 'uploads/'])}",
        [pw],
    )


def _basic(rng: random.Random) -> tuple[str, list[str]]:
    cred = base64.b64encode(f"{rng.choice(FIRST)}:{password(rng)}".encode()).decode()
    return rng.choice(
        [
            "Authorization: Basic {v}",
            "-H 'Authorization: Basic {v}'",
            '"authorization": "Basic {v}"',
        ]
    ).format(v=cred), [cred]


def _pem(rng: random.Random) -> tuple[str, list[str]]:
    label = rng.choice(
        [
            "RSA PRIVATE KEY",
            "PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
        ]
    )
    lines = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(rng.randint(3, 8))]
    nl = rng.choice(["\n", "\\n"])
    return f"-----BEGIN {label}-----{nl}{nl.join(lines)}{nl}-----END {label}-----", [
        lines[0],
        lines[-1],
    ]


def _card_cvv(rng: random.Random) -> tuple[str, list[str]]:
    shown, _ = _card(rng)
    cvv = _s(rng, string.digits, rng.choice([3, 3, 4]))
    month, year = f"{rng.randint(1, 12):02d}", str(rng.randint(25, 32))
    shape = rng.choice(
        [
            "card {c} exp {m}/{y} CVV {v}",
            "{c} | {m}/{y} | {v}",
            "card number: {c}, cvc: {v}",
            "Visa {c} (security code {v})",
            "{c}, {m}/{y}, {v}",
            "CC {c} CVV2={v}",
        ]
    )
    return shape.format(c=shown, m=month, y=year, v=cvv), [shown, cvv]


def _card_only(rng: random.Random) -> tuple[str, list[str]]:
    shown, _ = _card(rng)
    return rng.choice(["card {v}", "{v}", "charged to {v} yesterday", "cc_number={v}"]).format(
        v=shown
    ), [shown]


MAKERS: dict[str, Maker] = {
    "aws_key": _one(
        lambda r: "AKIA" + _s(r, UPPER_DIGITS, 16),
        "aws_access_key_id = {v}",
        "{v}",
        '"AccessKeyId": "{v}"',
        "key {v}",
    ),
    "aws_secret": _one(
        lambda r: _mixed(r, B64, 40),
        "aws_secret_access_key = {v}",
        '"SecretAccessKey": "{v}"',
        "export AWS_SECRET_ACCESS_KEY={v}",
        "AWS secret: {v}",
        "AKIAIOSFODNN7EXAMPLE / {v}",
    ),
    "aws_session_token": _one(
        lambda r: r.choice(["FwoGZXIvYXdzE", "IQoJb3JpZ2luX2Vj"]) + _s(r, B64, r.randint(120, 300)),
        "aws_session_token = {v}",
        '"SessionToken": "{v}"',
        "{v}",
        "export AWS_SESSION_TOKEN={v}",
    ),
    "github_token": _one(
        lambda r: (
            r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _s(r, ALNUM, 36)
            if r.random() < 0.7
            else "github_pat_" + _s(r, ALNUM, 22) + "_" + _s(r, ALNUM, 59)
        ),
        "{v}",
        "GITHUB_TOKEN={v}",
        "git clone https://{v}@github.com/acme/app.git",
    ),
    "gitlab_token": _one(
        lambda r: r.choice(["glpat-", "gldt-", "glrt-", "glptt-"]) + _s(r, URLSAFE, 20),
        "{v}",
        "PRIVATE-TOKEN: {v}",
        "CI_JOB_TOKEN {v}",
    ),
    "slack_token": _one(
        lambda r: (
            f"xox{r.choice('bpa')}-{_s(r, string.digits, 11)}-{_s(r, string.digits, 12)}-{_s(r, ALNUM, 24)}"
        ),
        "{v}",
        "SLACK_BOT_TOKEN={v}",
    ),
    "slack_webhook": (
        lambda r: (lambda path: (f"https://hooks.slack.com/services/{path}", [path]))(
            f"T{_s(r, UPPER_DIGITS, 8)}/B{_s(r, UPPER_DIGITS, 10)}/{_s(r, ALNUM, 24)}"
        )
    ),
    "stripe_key": _one(
        lambda r: (
            r.choice(["sk_live_", "sk_test_", "rk_live_", "whsec_"])
            + _s(r, ALNUM, r.randint(24, 60))
        ),
        "{v}",
        "STRIPE_SECRET_KEY={v}",
        "stripe.api_key = '{v}'",
    ),
    "google_api_key": _one(
        lambda r: "AIza" + _s(r, URLSAFE, 35),
        "{v}",
        "https://maps.googleapis.com/maps/api/geocode/json?address=x&key={v}",
        "GOOGLE_API_KEY={v}",
    ),
    "google_oauth": _one(
        lambda r: (
            "ya29." + _s(r, URLSAFE, r.randint(60, 150))
            if r.random() < 0.6
            else "GOCSPX-" + _s(r, URLSAFE, 28)
        ),
        "{v}",
        "access token {v}",
    ),
    "azure_key": (
        lambda r: r.choice(
            [
                lambda: (
                    lambda k: (
                        f"DefaultEndpointsProtocol=https;AccountName=acct{r.randint(1, 99)};AccountKey={k};EndpointSuffix=core.windows.net",
                        [k],
                    )
                )(_mixed(r, B64, 86) + "=="),
                lambda: (
                    lambda k: (
                        f"Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={k}",
                        [k],
                    )
                )(_mixed(r, B64, 43) + "="),
                lambda: (lambda k: (f"client secret {k}", [k]))(
                    _s(r, ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + _s(r, ALNUM + "_~.-", 34)
                ),
                lambda: (
                    lambda k: (
                        f"https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2025-01-01&sp=r&sig={k}",
                        [k],
                    )
                )(_mixed(r, ALNUM, 40) + "%3D"),
                lambda: (lambda k: (f"Ocp-Apim-Subscription-Key: {k}", [k]))(_s(r, HEX, 32)),
            ]
        )()
    ),
    "huggingface_token": _one(
        lambda r: "hf_" + _mixed(r, ALNUM, 34),
        "{v}",
        "HF_TOKEN={v}",
        "huggingface-cli login --token {v}",
    ),
    "npm_token": _one(
        lambda r: "npm_" + _s(r, ALNUM, 36),
        "{v}",
        "//registry.npmjs.org/:_authToken={v}",
        "NPM_TOKEN={v}",
    ),
    "pypi_token": _one(
        lambda r: "pypi-AgEIcHlwaS5vcmc" + _s(r, URLSAFE, r.randint(60, 160)),
        "{v}",
        "password = {v}",
        "TWINE_PASSWORD={v}",
    ),
    "sendgrid_key": _one(
        lambda r: "SG." + _s(r, URLSAFE, 22) + "." + _s(r, URLSAFE, 43),
        "{v}",
        "SENDGRID_API_KEY={v}",
    ),
    "twilio_key": _one(lambda r: r.choice(["AC", "SK"]) + _s(r, HEX, 32), "{v}", "account sid {v}"),
    "openai_key": _one(
        lambda r: r.choice(
            [
                lambda: "sk-proj-" + _mixed(r, URLSAFE, r.randint(80, 156)),
                lambda: "sk-" + _mixed(r, ALNUM, 48),
                lambda: "sk-svcacct-" + _mixed(r, URLSAFE, 64),
            ]
        )(),
        "{v}",
        "OPENAI_API_KEY={v}",
        'openai.api_key = "{v}"',
    ),
    "anthropic_key": _one(
        lambda r: "sk-ant-api03-" + _s(r, URLSAFE, 93) + "AA",
        "{v}",
        "ANTHROPIC_API_KEY={v}",
        "x-api-key: {v}",
    ),
    "jwt": _one(_jwt, "{v}", "Authorization: Bearer {v}", "id_token={v}"),
    "private_key": _pem,
    "bearer_token": _one(
        lambda r: _mixed(r, ALNUM + "._-", r.randint(24, 64)),
        "Authorization: Bearer {v}",
        '-H "Authorization: Bearer {v}"',
        "bearer {v}",
    ),
    "basic_auth": _basic,
    "db_password": _db_url,
    "url_password": _url_auth,
    "password": _pw_assign,
    "secret": _secret_assign,
    "email": _one(
        lambda r: r.choice(
            [
                lambda: f"{r.choice(FIRST)}.{r.choice(LAST)}@{r.choice(DOMAINS)}",
                lambda: f"{r.choice(FIRST)}{r.randint(1, 999)}@{r.choice(DOMAINS)}",
                lambda: f"{r.choice(FIRST)}+{r.choice(WORDS)}@{r.choice(DOMAINS)}",
                lambda: f"{r.choice(FIRST)[0]}_{r.choice(LAST)}@{r.choice(DOMAINS)}",
            ]
        )(),
        "{v}",
        "<{v}>",
        "mailto:{v}",
        "{first} <{v}>",
    ),
    "phone": _one(_phone, "{v}", "tel: {v}", "call me on {v}", "Phone: {v}", "WhatsApp {v}"),
    "card": _card_only,
    "card_cvv": _card_cvv,
    "iban": _one(_iban, "{v}", "IBAN: {v}", "transfer to {v} please"),
    "ssn": _one(_ssn, "{v}", "SSN: {v}", "social security number {v}"),
    "cn_id": _one(_cn_id, "{v}", "身份证号：{v}", "ID {v}"),
    "uk_nino": _one(_nino, "{v}", "NI number {v}", "National Insurance: {v}"),
    "aadhaar": _one(_aadhaar, "{v}", "Aadhaar {v}", "आधार: {v}"),
    "pan": _one(_pan, "{v}", "PAN {v}", "PAN card: {v}"),
    "fr_nir": _one(_fr_nir, "{v}", "n° de sécurité sociale {v}", "NIR: {v}"),
}

# Contexts a snippet is put in. {s} is the snippet.
MAIN_CONTEXTS = [
    "Here you go: {s}",
    "{s}",
    "Can you remember this for later? {s} 🙏",
    "2024-05-0{d}T12:3{d}:0{d}Z INFO worker[{n}]: connecting with {s}",
    "[ERROR] request failed ({s}) after 3 retries",
    "# .env\nDEBUG=false\n{s}\nLOG_LEVEL=info",
    '{{"event": "deploy", "detail": {j}, "ok": true}}',
    "| field | value |\n|---|---|\n| cred | {s} |",
    "Merci ! Voici : {s} — à bientôt",
    "Notiz für später: {s} (nicht teilen)",
    "请记住：{s} 谢谢",
    "yaml:\n  service:\n    config: {s}\n",
    "ok so {s} and then we go to lunch 🍕",
    "user said {s}; assistant replied ok",
]
HELDOUT_CONTEXTS = [
    "FYI {s}",
    "> {s}\n> quoted from the ticket",
    'log: ts={n} level=warn msg="using {s}"',
    "मेरी जानकारी: {s} धन्यवाद",
    "メモ：{s}",
    "Step 3 — paste `{s}` into the form 👨‍👩‍👧",
    '[{{"k": {j}}}]',
    'Ticket #{n}: customer wrote "{s}" in the chat',
    "(from Slack) {s} — don't lose it",
    "```\n{s}\n```",
]


def _embed(rng: random.Random, contexts: list[str], snippet: str) -> str:
    ctx = rng.choice(contexts)
    if "{first}" in snippet:
        snippet = snippet.replace("{first}", rng.choice(FIRST).capitalize())
    if "\n" in snippet and ("{j}" in ctx):
        ctx = "{s}"
    return ctx.format(
        s=snippet,
        j=json.dumps(snippet, ensure_ascii=False),
        d=rng.randint(1, 9),
        n=rng.randint(100, 99999),
    )


# --- look-alikes ------------------------------------------------------------------------

PROSE = [
    "The secret is patience.",
    "the password is required for every login",
    "my password is longer than yours, so what",
    "Password reset link expired, please request a new one.",
    "The token limit was exceeded at 128k tokens.",
    "secret: patience is key",
    "Top secret: the surprise party is on Friday!",
    "She is the bearer of good news.",
    "Basic authentication is enabled on the staging server.",
    "Your password must be at least 12 characters long.",
    "The API key is stored in the vault, not in the repo.",
    "passwords are hashed with argon2id",
    "Forgot password? Click here.",
    "The access token is valid for one hour.",
    "Use a password manager, not sticky notes.",
    "The secret sauce is butter and time.",
    "Das Passwort ist geheim und bleibt es.",
    "Le mot de passe est trop court.",
    "密码太简单了，请换一个更长的。",
    "Tokenization splits text into tokens.",
    "client_secret is required when confidential is true",
    "password is incorrect, 2 attempts left",
    "The secret to good bread is a long, slow rise.",
    "Token: see the vault entry named prod-db",
    "Set the password via the PGPASSWORD environment variable.",
]
CODE = [
    'password = os.environ["DB_PASSWORD"]',
    "api_key = settings.OPENAI_API_KEY",
    "token = get_token(user)",
    "password: ${DB_PASSWORD}",
    "DB_PASSWORD=<your-password>",
    "secret = None",
    "max_tokens=4096",
    "password_length = 16",
    "token_type: bearer",
    "secret_name: prod-db-credentials",
    "if not password: raise ValueError('password required')",
    "const token = process.env.GITHUB_TOKEN;",
    "API_KEY=your_api_key_here",
    "password: '********'",
    "tokens_used = 1532",
    "def check_password(password: str) -> bool:",
    "pip install scikit-learn  # sk-learn for short",
    "sk-learn-linear-models-2024 is the course slug",
    "see docs/sk-tutorial-part-2.md",
    "AKIA is the prefix of long-term AWS access key ids",
    "ghp_ tokens are 40 characters long",
    "from huggingface_hub import hf_hub_download",
    "npm_config_registry=https://registry.npmjs.org/",
    "sk_live keys must never be committed",
    "git clone git@github.com:acme/engram.git",
    "npm install lodash@4.17.21 @types/node@20.11.5",
    '<img src="icon@2x.png">',
    "@app.route('/login', methods=['POST'])",
    "ssh deploy@10.0.0.5 -p 2222",
    "arn:aws:iam::123456789012:role/ReadOnly",
    "Basic usage: engram --help",
    "bypass: true",
]


def _lookalike(rng: random.Random) -> tuple[str, str]:
    d = lambda n: _s(rng, string.digits, n)  # noqa: E731
    choices: list[tuple[str, Callable[[], str]]] = [
        ("uuid", lambda: str(uuid.UUID(bytes=rng.randbytes(16), version=4))),
        ("uuid", lambda: str(uuid.UUID(bytes=rng.randbytes(16), version=4)).upper()),
        ("sha256", lambda: hashlib.sha256(rng.randbytes(8)).hexdigest()),
        ("sha1", lambda: "commit " + hashlib.sha1(rng.randbytes(8)).hexdigest()),
        ("md5", lambda: "md5 " + hashlib.md5(rng.randbytes(8)).hexdigest()),
        (
            "git_sha",
            lambda: (
                "fixed in "
                + hashlib.sha1(rng.randbytes(8)).hexdigest()[: rng.choice([7, 8, 10, 12])]
            ),
        ),
        ("docker_digest", lambda: "image@sha256:" + hashlib.sha256(rng.randbytes(8)).hexdigest()),
        ("base64", lambda: base64.b64encode(rng.randbytes(rng.randint(12, 120))).decode()),
        ("base64", lambda: "data:image/png;base64," + base64.b64encode(rng.randbytes(60)).decode()),
        ("base64", lambda: json.dumps({"data": base64.b64encode(rng.randbytes(30)).decode()})),
        ("version", lambda: f"v{rng.randint(0, 20)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}"),
        (
            "version",
            lambda: f"Python {rng.randint(2, 3)}.{rng.randint(6, 13)}.{rng.randint(0, 19)}",
        ),
        (
            "version",
            lambda: (
                f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}-rc.{rng.randint(1, 5)}"
            ),
        ),
        ("version", lambda: f"node@{rng.randint(14, 22)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"),
        (
            "date",
            lambda: f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        ),
        (
            "date",
            lambda: (
                f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1990, 2030)} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            ),
        ),
        (
            "date",
            lambda: f"{rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.{rng.randint(1990, 2030)}",
        ),
        (
            "timestamp",
            lambda: (
                f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{d(6)}+00:00"
            ),
        ),
        ("timestamp", lambda: f"ts={rng.randint(1600000000, 1800000000)}"),
        ("timestamp", lambda: f"created_ms: {rng.randint(1600000000000, 1800000000000)}"),
        (
            "ip",
            lambda: (
                f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
            ),
        ),
        (
            "ip",
            lambda: (
                f"fe80::{_s(rng, HEX, 4)}:{_s(rng, HEX, 4)}:{_s(rng, HEX, 4)}:{_s(rng, HEX, 4)}"
            ),
        ),
        ("mac", lambda: ":".join(_s(rng, HEX, 2) for _ in range(6))),
        ("number", lambda: f"{rng.randint(1, 999)},{d(3)},{d(3)}.{d(2)} USD"),
        ("number", lambda: f"pi is about 3.{d(12)}"),
        ("number", lambda: f"{rng.randint(10, 99)} {d(3)} {d(3)} users"),
        ("order_id", lambda: f"ORD-{rng.randint(2019, 2030)}-{d(6)}"),
        ("order_id", lambda: f"invoice {rng.randint(1, 9)}{d(7)}"),
        ("card_bad_luhn", lambda: _bad_luhn(rng)),
        ("iban_bad_check", lambda: _bad_iban(rng)),
        ("ssn_invalid", lambda: f"{rng.choice(['000', '666', '9' + d(2)])}-{d(2)}-{d(4)}"),
        ("cn_id_bad_check", lambda: _bad_cn_id(rng)),
        ("isbn", lambda: f"ISBN 978-{rng.randint(0, 9)}-{d(3)}-{d(5)}-{rng.randint(0, 9)}"),
        ("coordinates", lambda: f"{rng.uniform(-90, 90):.4f}, {rng.uniform(-180, 180):.4f}"),
        ("time_range", lambda: f"open {rng.randint(6, 10):02d}:00-{rng.randint(16, 22):02d}:30"),
        ("account_id", lambda: f"arn:aws:s3:::{rng.choice(WORDS)}-{d(12)}/logs"),
        ("port", lambda: f"listening on 0.0.0.0:{rng.randint(1024, 65535)}"),
        ("hex_color", lambda: f"color: #{_s(rng, HEX, 6)}"),
        (
            "semver_range",
            lambda: f"requires >={rng.randint(1, 5)}.{rng.randint(0, 9)},<{rng.randint(6, 9)}.0",
        ),
        ("prose", lambda: rng.choice(PROSE)),
        ("code", lambda: rng.choice(CODE)),
        (
            "emoji",
            lambda: rng.choice(
                [
                    "👨‍👩‍👧‍👦 family time",
                    "🏳️‍🌈 pride",
                    "👍🏽 sounds good",
                    "🇩🇪🇫🇷 trip",
                    "❤️‍🔥 love it",
                    "🧑🏿‍💻 coding",
                ]
            ),
        ),
        (
            "other_text",
            lambda: rng.choice(
                [
                    "Ich wohne in Köln seit 2019.",
                    "Je préfère le thé vert.",
                    "我住在上海，电话坏了。",
                    "मैं दिल्ली में रहता हूँ",
                    "أنا أحب القهوة",
                    "東京は雨です。",
                    "Привет, как дела?",
                ]
            ),
        ),
        ("slug", lambda: f"sk-{rng.choice(WORDS)}-{rng.choice(WORDS)}-{rng.randint(1, 99)}"),
        (
            "k8s_name",
            lambda: (
                f"pod/api-{_s(rng, HEX, 10)}-{_s(rng, string.ascii_lowercase + string.digits, 5)}"
            ),
        ),
    ]
    what, make = rng.choice(choices)
    return what, make()


def _bad_luhn(rng: random.Random) -> str:
    while True:
        digits = rng.choice(["4", "5", "37", "6011"]) + _s(rng, string.digits, 12)
        digits = (
            digits[:16] if len(digits) >= 16 else digits + _s(rng, string.digits, 16 - len(digits))
        )
        if not checksums.luhn(digits):
            return (
                f"tracking number {digits}"
                if rng.random() < 0.5
                else " ".join(digits[i : i + 4] for i in range(0, 16, 4))
            )


def _bad_iban(rng: random.Random) -> str:
    good = _iban(rng).replace(" ", "")
    check = int(good[2:4])
    bad = f"{good[:2]}{(check + rng.randint(1, 50)) % 97 + 2:02d}{good[4:]}"
    return bad if not checksums.iban(bad) else bad[:-1] + str((int(bad[-1]) + 1) % 10)


def _bad_cn_id(rng: random.Random) -> str:
    good = _cn_id(rng)
    wrong = [c for c in "0123456789X" if c != good[-1]]
    return good[:-1] + rng.choice(wrong)


LOOKALIKE_CONTEXTS = [
    "{s}",
    "see {s} for details",
    "2024-05-01T12:00:00Z DEBUG {s}",
    '{{"value": {j}}}',
    "Note: {s} 🙂",
    "我看到了 {s}",
]


def generate(
    *, seed: int, secrets_per_kind: int, lookalikes: int, contexts: list[str]
) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for kind, make in MAKERS.items():
        for _ in range(secrets_per_kind):
            snippet, values = make(rng)
            rows.append({"text": _embed(rng, contexts, snippet), "kind": kind, "values": values})
    for _ in range(lookalikes):
        what, text = _lookalike(rng)
        ctx = rng.choice(LOOKALIKE_CONTEXTS)
        rows.append(
            {
                "text": ctx.format(s=text, j=json.dumps(text, ensure_ascii=False)),
                "kind": f"lookalike:{what}",
                "values": [],
            }
        )
    return rows


def write(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    write(MAIN, generate(seed=17, secrets_per_kind=30, lookalikes=1100, contexts=MAIN_CONTEXTS))
    write(
        HELDOUT, generate(seed=1717, secrets_per_kind=8, lookalikes=300, contexts=HELDOUT_CONTEXTS)
    )


if __name__ == "__main__":
    main()
