"""Engram settings: everything comes from ENGRAM_* variables, and nothing needs
to be set for the embedded default (SQLite in ./data, local broker, no LLM)."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from engram_site.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_json,
    env_list,
    env_str,
)
from engram_site.ratelimit import parse_rate
from memory.services.providers import config as providers_config

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("ENGRAM_DATA_DIR", str(BASE_DIR / "data"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    # With no ENGRAM_SECRET_KEY a random key is made once and kept in the data
    # directory, so sessions survive restarts without any set-up.
    configured = env_str("ENGRAM_SECRET_KEY", "")
    if configured:
        return configured
    path = DATA_DIR / "secret_key"
    if not path.exists():
        # The web, worker and beat processes start together on a fresh data
        # directory: write the key to a private file and link it into place,
        # so no process ever reads a half-written (empty) key and the first
        # one to link wins.
        fd, tmp = tempfile.mkstemp(dir=DATA_DIR, prefix=".secret_key.")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(50))
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("ENGRAM_DEBUG", False)
ALLOWED_HOSTS = env_list("ENGRAM_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("ENGRAM_CSRF_TRUSTED_ORIGINS", [])

# --- Production: HTTPS behind a TLS-terminating proxy ---------------------------------
# ENGRAM_PRODUCTION=1 turns each of these on; each has its own variable to
# turn it back off. The proxy must set X-Forwarded-Proto (and strip it from
# what clients send), which is how Django knows a request came in over HTTPS.
PRODUCTION = env_bool("ENGRAM_PRODUCTION", False)
if env_bool("ENGRAM_BEHIND_TLS_PROXY", PRODUCTION):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("ENGRAM_SSL_REDIRECT", PRODUCTION)
# Health checks come from inside the host or container, over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health$"]
SECURE_HSTS_SECONDS = env_int("ENGRAM_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("ENGRAM_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("ENGRAM_HSTS_PRELOAD", PRODUCTION)
SESSION_COOKIE_SECURE = env_bool("ENGRAM_SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Content-Security-Policy of every HTML page (dashboard, admin, API docs):
# engram_site/middleware.py. "off" sends none.
CONTENT_SECURITY_POLICY = env_str(
    "ENGRAM_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    # Only for its templates and static files: with ninja installed as an
    # app, /api/v1/docs loads Swagger UI from our own static files instead of
    # a CDN, so the docs work with no internet.
    "ninja",
    "memory.apps.MemoryConfig",
    "environment.apps.EnvironmentConfig",
    "consolidation.apps.ConsolidationConfig",
]

MIDDLEWARE = [
    # Outermost, so that it also sees the errors the others answer.
    "engram_site.middleware.ApiJsonErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "engram_site.middleware.BodySizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions (the language chosen in the header is kept there), before
    # common; Django's LocaleMiddleware for every path but /api/, whose errors
    # stay English and whose answers do not vary with Accept-Language.
    "engram_site.middleware.DashboardLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "engram_site.middleware.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "engram_site.urls"
WSGI_APPLICATION = "engram_site.wsgi.application"
ASGI_APPLICATION = "engram_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
DATABASE_URL = env_str("ENGRAM_DATABASE_URL", f"sqlite:///{DATA_DIR / 'engram.sqlite3'}")
try:
    _db = dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("ENGRAM_DB_CONN_MAX_AGE", 60))
except ValueError as exc:
    raise ImproperlyConfigured(f"ENGRAM_DATABASE_URL is not a database URL: {exc}") from None
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the single writer; IMMEDIATE takes the write
    # lock at BEGIN so two writers queue on busy_timeout instead of failing
    # with "database is locked" halfway through a transaction. secure_delete
    # overwrites deleted rows with zeros, so forgotten text does not linger in
    # free pages of the file (memory.services.reclaim does the rest).
    # Django's backend, with write transactions queueing on a lock file
    # first, so the lock goes to writers in turn (engram_site/db/sqlite3).
    _db["ENGINE"] = "engram_site.db.sqlite3"
    _db["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            "PRAGMA busy_timeout=20000; PRAGMA foreign_keys=ON; PRAGMA cache_size=-64000; "
            "PRAGMA secure_delete=ON;"
        ),
    }
    # A file, not memory, so worker processes started by integration tests
    # see the same test database.
    _db["TEST"] = {"NAME": str(DATA_DIR / "test_engram.sqlite3")}
    _db["CONN_MAX_AGE"] = 0 if _db["CONN_MAX_AGE"] is None else _db["CONN_MAX_AGE"]
elif _db["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, reading timestamps faster (engram_site/db/postgresql).
    _db["ENGINE"] = "engram_site.db.postgresql"
    _db.setdefault("OPTIONS", {})
    # The reads every request makes (recall's rows, the API key, the
    # context's core blocks and palace directory) go through a cursor that
    # binds on the server, and psycopg prepares each once a connection has
    # run it 5 times, so PostgreSQL stops parsing and planning them: at 100k
    # facts + 100k turns its CPU for recall's reads went from 1.1-1.3 to
    # 0.8-0.9 ms and for the context's own four reads from 0.4-0.5 to
    # 0.1-0.2 ms (engram_site/db/prepared.py). Off (ENGRAM_DB_PREPARED=false) behind a
    # pooler that hands one session's statements to other server
    # connections (PgBouncer in transaction mode).
    if env_bool("ENGRAM_DB_PREPARED", True):
        _db["OPTIONS"].setdefault("prepare_threshold", 5)
else:
    raise ImproperlyConfigured("ENGRAM_DATABASE_URL must be a sqlite:// or postgres:// URL")
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
# The dashboard's languages; data enums stay English in storage.
LANGUAGES = [("en", "English"), ("zh-hans", "中文"), ("ru", "Русский")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Short date formats per language that differ from Django's (English keeps ISO dates).
FORMAT_MODULE_PATH = ["engram_site.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
LOGIN_URL = "/admin/login/"

# --- Request limits ---------------------------------------------------------------
# Oversized bodies answer 413 before the view reads them.
MAX_BODY_BYTES = env_int("ENGRAM_MAX_BODY_BYTES", 2 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES
# Threads per web worker process that run Django's views (engram_site/asgi.py);
# each keeps its own database connection. 8 leaves room for requests that
# wait on SQLite's write lock without holding back the reads queued behind
# them; of those threads at most WEB_RUNNING compute at once
# (engram_site/running.py), 0 for no limit.
WEB_THREADS = env_int("ENGRAM_WEB_THREADS", 8, minimum=1)
WEB_RUNNING = env_int("ENGRAM_WEB_RUNNING", 2, minimum=0)
# A keep-alive connection is closed after this many answers, so a client's
# connections spread over the worker processes (engram_site/serving.py);
# 0 keeps them open for good.
KEEPALIVE_REQUESTS = env_int("ENGRAM_KEEPALIVE_REQUESTS", 50, minimum=0)
# JSON bodies nested deeper than this answer 400 (engram_site/api.py).
MAX_JSON_DEPTH = env_int("ENGRAM_MAX_JSON_DEPTH", 32, minimum=4)

# --- Celery -------------------------------------------------------------------------
REDIS_URL = env_str("ENGRAM_REDIS_URL", "")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": 3600,
        "socket_timeout": 5,
        "socket_connect_timeout": 5,
    }
else:
    # The embedded default: kombu's filesystem transport in the data directory,
    # so worker and beat run as real processes with no Redis installed.
    _broker_dir = DATA_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    # The host is meaningless to this transport, but without one kombu logs
    # "No hostname was supplied" every time it builds a connection.
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # kombu keeps its exchange tables in ./control unless told otherwise,
        # which would scatter broker files into whatever directory we run from.
        "control_folder": str(_broker_dir / "control"),
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "store_processed": False,
        # kombu's virtual transports sleep this long whenever a poll finds no
        # message it may take (queue empty, or prefetch full until a running
        # task is acknowledged). Its default of one second capped a worker at
        # about one job per second; a directory listing every 50 ms is cheap.
        "polling_interval": env_float("ENGRAM_BROKER_POLL_SECONDS", 0.05, minimum=0.001),
    }
CELERY_TASK_ALWAYS_EAGER = env_bool("ENGRAM_CELERY_EAGER", False)
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# --- Cache and rate limits ---------------------------------------------------------
# Shared by every process: Redis when there is one, otherwise a small SQLite
# file of its own in the data directory (engram_site/cache.py says why not
# Django's file or database cache).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "engram",
            # Short: when Redis is away the limiter lets requests through
            # (engram_site/ratelimit.py), and should not hold them first.
            "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "engram_site.cache.SQLiteCache",
            "LOCATION": str(DATA_DIR / "cache.sqlite3"),
        }
    }
RATE_LIMIT_CACHE = "default"
# Requests per API key, and per client address for requests without a valid
# key (engram_site/ratelimit.py). On by default at limits no agent reaches by
# talking (a few requests a turn) but a runaway loop or a key-guessing flood
# does; over them the API answers 429 with Retry-After.
RATE_LIMIT = parse_rate("ENGRAM_RATE_LIMIT", env_str("ENGRAM_RATE_LIMIT", "1200/min"))
RATE_LIMIT_ANONYMOUS = parse_rate(
    "ENGRAM_RATE_LIMIT_ANONYMOUS", env_str("ENGRAM_RATE_LIMIT_ANONYMOUS", "120/min")
)

# --- Memory behaviour ---------------------------------------------------------------
ENGRAM = {
    # write pipeline
    "SALIENCE_MIN_CHARS": env_int("ENGRAM_SALIENCE_MIN_CHARS", 24, minimum=0),
    "PASTE_DUMP_CHARS": env_int("ENGRAM_PASTE_DUMP_CHARS", 6000, minimum=100),
    "JOB_MAX_ATTEMPTS": env_int("ENGRAM_JOB_MAX_ATTEMPTS", 5, minimum=1),
    "JOB_LEASE_SECONDS": env_int("ENGRAM_JOB_LEASE_SECONDS", 300, minimum=5),
    "SWEEP_INTERVAL_SECONDS": env_int("ENGRAM_SWEEP_INTERVAL_SECONDS", 60, minimum=1),
    "SWEEP_UNSENT_AFTER_SECONDS": env_int("ENGRAM_SWEEP_UNSENT_AFTER_SECONDS", 30, minimum=1),
    # Ingest jobs per broker message: a batch of turns is sent as messages of
    # this many job ids, each claimed and run one by one by the worker that
    # takes the message. Larger amortises the broker; smaller spreads a batch
    # over more worker processes and keeps each task short.
    "INGEST_CHUNK": env_int("ENGRAM_INGEST_CHUNK", 25, minimum=1),
    # What redaction replaces with [REDACTED:kind] before anything is stored or
    # sent to an LLM: all, none, groups (secrets, pii, national_id, cards) or
    # kinds, "-kind" to leave one out (memory/screening/redaction.py).
    "REDACT": env_list("ENGRAM_REDACT", ["all"]),
    # LLM providers: a JSON list of {"base_url", "model", "api_key"?, "timeout"?}
    # tried in order. Empty = the built-in rule-based extractor.
    "LLM_PROVIDERS": env_json("ENGRAM_LLM_PROVIDERS", []),
    "LLM_TIMEOUT_SECONDS": env_float("ENGRAM_LLM_TIMEOUT", 30.0, minimum=0.1),
    "LLM_BUDGET_PER_HOUR": env_int("ENGRAM_LLM_BUDGET_PER_HOUR", 60, minimum=0),
    # The judge of uncertain writes (memory/services/pipeline/judge.py): off
    # (""), a provider's name from LLM_PROVIDERS, or "llm" for the first.
    # Candidates whose closest neighbour's similarity lies in
    # [ACCEPT_BELOW, MERGE_ABOVE) get a merge / accept / defer verdict; a
    # contradiction the rules found at CONTRADICTION_MIN or above is
    # confirmed or dismissed. Unavailable, slow or garbled: the rules decide.
    "JUDGE": env_str("ENGRAM_JUDGE", ""),
    "JUDGE_MERGE_ABOVE": env_float("ENGRAM_JUDGE_MERGE_ABOVE", 0.8, minimum=0.0),
    "JUDGE_ACCEPT_BELOW": env_float("ENGRAM_JUDGE_ACCEPT_BELOW", 0.5, minimum=0.0),
    "JUDGE_CONTRADICTION_MIN": env_float("ENGRAM_JUDGE_CONTRADICTION_MIN", 0.5, minimum=0.0),
    "JUDGE_TIMEOUT_SECONDS": env_float("ENGRAM_JUDGE_TIMEOUT_SECONDS", 5.0, minimum=0.1),
    # embeddings
    "EMBEDDINGS": env_choice(
        "ENGRAM_EMBEDDINGS", "none", ("none", "local", "ollama", "openai_compat")
    ),
    "EMBEDDINGS_URL": env_str("ENGRAM_EMBEDDINGS_URL", ""),
    "EMBEDDINGS_MODEL": env_str("ENGRAM_EMBEDDINGS_MODEL", ""),
    "EMBEDDINGS_API_KEY": env_str("ENGRAM_EMBEDDINGS_API_KEY", ""),
    "EMBEDDINGS_TIMEOUT_SECONDS": env_float("ENGRAM_EMBEDDINGS_TIMEOUT", 10.0, minimum=0.1),
    "EMBEDDINGS_BATCH_SIZE": env_int("ENGRAM_EMBEDDINGS_BATCH_SIZE", 64, minimum=1),
    # Background catch-up of rows without a vector (turns, summaries, items
    # whose embedding failed): how often, and how many rows per space per run.
    "EMBED_SWEEP_SECONDS": env_int("ENGRAM_EMBED_SWEEP_SECONDS", 30, minimum=1),
    "EMBED_SWEEP_LIMIT": env_int("ENGRAM_EMBED_SWEEP_LIMIT", 2000, minimum=1),
    # core memory (L1) and prompt context
    "CORE_USER_BUDGET_TOKENS": env_int("ENGRAM_CORE_USER_BUDGET", 500, minimum=50),
    "CORE_AGENT_BUDGET_TOKENS": env_int("ENGRAM_CORE_AGENT_BUDGET", 800, minimum=50),
    "CORE_OVERFLOW": env_choice("ENGRAM_CORE_OVERFLOW", "refuse", ("refuse", "demote")),
    # Agent writes that wait for a person (memory/services/approval.py): off,
    # core (core-block writes) or all (core blocks and facts). Turn ingestion
    # is never gated: it would stall learning.
    "WRITE_APPROVAL": env_choice("ENGRAM_WRITE_APPROVAL", "off", ("off", "core", "all")),
    "CONTEXT_BUDGET_TOKENS": env_int("ENGRAM_CONTEXT_BUDGET", 1500, minimum=100),
    # GET /context?session_id=... adds a one-line memory_assess reminder while
    # that session has search batches no assessment has judged.
    "ASSESS_REMINDER": env_bool("ENGRAM_ASSESS_REMINDER", True),
    "MIRROR_DIR": Path(env_str("ENGRAM_MIRROR_DIR", str(DATA_DIR / "memory"))),
    # recall
    "RECALL_K": env_int("ENGRAM_RECALL_K", 8, minimum=1),
    "RECALL_SCORE_FLOOR": env_float("ENGRAM_RECALL_SCORE_FLOOR", 0.1, minimum=0.0),
    "CONTEXT_RECALL_BUDGET_TOKENS": env_int("ENGRAM_CONTEXT_RECALL_BUDGET", 800, minimum=0),
    "RECALL_TIMEOUT_SECONDS": env_float("ENGRAM_RECALL_TIMEOUT", 2.0, minimum=0.05),
    # LLM multi-query rewrite for POST /recall and /memory/search (never
    # /context): memory/services/recall/rewrite.py. Off: no LLM in the read path.
    "RECALL_REWRITE": env_bool("ENGRAM_RECALL_REWRITE", False),
    "RECALL_REWRITE_TIMEOUT_SECONDS": env_float("ENGRAM_RECALL_REWRITE_TIMEOUT", 3.0, minimum=0.1),
    # Helper threads per process that run recall's fact channels beside its
    # turn channel (memory/services/recall/__init__.py); 0 runs them in turn.
    "RECALL_THREADS": env_int("ENGRAM_RECALL_THREADS", 2, minimum=0),
    # External memory servers over MCP (memory/services/providers/): a JSON
    # list of {name, command | url, headers?, mode, timeout?, mirror_writes?,
    # spaces?, search_tool?, mirror_tool?, limit?}. Additive: recall never
    # waits on one past its timeout, and a dead one is skipped.
    "PROVIDERS": providers_config.parse(env_json("ENGRAM_PROVIDERS", [])),
    # A provider failing this many calls in a row is not called for this
    # many seconds, then probed with one call (providers/breaker.py).
    "PROVIDER_BREAKER_FAILURES": env_int("ENGRAM_PROVIDER_BREAKER_FAILURES", 3, minimum=1),
    "PROVIDER_BREAKER_SECONDS": env_float("ENGRAM_PROVIDER_BREAKER_SECONDS", 30.0, minimum=0.1),
    # The vector channel in recall (memory/services/recall/vector_routing.py).
    # MODE auto uses the mode and weight measured on LoCoMo for the local
    # models (eval_vectors); WEIGHT above 0 overrides that weight, and is the
    # weight of the explicit modes fuse/rerank/gate. Other models stay out of
    # recall until a weight is set after measuring.
    "RECALL_VECTOR_WEIGHT": env_float("ENGRAM_RECALL_VECTOR_WEIGHT", 0.0, minimum=0.0),
    "RECALL_VECTOR_MODE": env_choice(
        "ENGRAM_RECALL_VECTOR_MODE", "auto", ("auto", "fuse", "rerank", "gate", "off")
    ),
    # the memory palace: entries per room before the next room opens, and
    # whether new entries enrol in spaced-repetition review (1 day first).
    "ROOM_CAPACITY": env_int("ENGRAM_ROOM_CAPACITY", 9, minimum=1),
    "REVIEW_ENROL": env_bool("ENGRAM_REVIEW_ENROL", True),
    # Entries given a palace place per background slotting task (a store from
    # before the palace, a large import); the task sends itself again for more.
    "PALACE_SLOT_TASK_LIMIT": env_int("ENGRAM_PALACE_SLOT_TASK_LIMIT", 5000, minimum=1),
    # consolidation
    "CONSOLIDATE_IDLE_MINUTES": env_int("ENGRAM_CONSOLIDATE_IDLE_MINUTES", 20, minimum=1),
    "CONSOLIDATE_DAILY_AT": env_str("ENGRAM_CONSOLIDATE_DAILY_AT", "03:30"),
    "CONSOLIDATE_CHECK_SECONDS": env_int("ENGRAM_CONSOLIDATE_CHECK_SECONDS", 300, minimum=1),
    # A run's lease: a worker that dies mid-run is taken over once it expires.
    "CONSOLIDATE_LEASE_SECONDS": env_int("ENGRAM_CONSOLIDATE_LEASE_SECONDS", 900, minimum=5),
    "CONSOLIDATE_MAX_LLM_CALLS": env_int("ENGRAM_CONSOLIDATE_MAX_LLM_CALLS", 40, minimum=0),
    "CONSOLIDATE_STEP_LLM_CALLS": env_int("ENGRAM_CONSOLIDATE_STEP_LLM_CALLS", 15, minimum=0),
    "CONSOLIDATE_SKIP_STEPS": env_list("ENGRAM_CONSOLIDATE_SKIP_STEPS", []),
    "CONSOLIDATE_SUMMARIZE_MAX_SESSIONS": env_int(
        "ENGRAM_CONSOLIDATE_SUMMARIZE_MAX", 200, minimum=0
    ),
    "CONSOLIDATE_SUMMARY_MAX_CHARS": env_int("ENGRAM_CONSOLIDATE_SUMMARY_CHARS", 600, minimum=80),
    "CONSOLIDATE_PROMOTE_MIN_SESSIONS": env_int(
        "ENGRAM_CONSOLIDATE_PROMOTE_SESSIONS", 3, minimum=2
    ),
    "CONSOLIDATE_PROMOTE_MAX": env_int("ENGRAM_CONSOLIDATE_PROMOTE_MAX", 10, minimum=0),
    "CONSOLIDATE_MERGE_JACCARD": env_float("ENGRAM_CONSOLIDATE_MERGE_JACCARD", 0.8, minimum=0.1),
    "CONSOLIDATE_MERGE_COSINE": env_float("ENGRAM_CONSOLIDATE_MERGE_COSINE", 0.92, minimum=0.1),
    "CONSOLIDATE_REEMBED_LIMIT": env_int("ENGRAM_CONSOLIDATE_REEMBED_LIMIT", 2000, minimum=0),
    "CONSOLIDATE_SKILL_MIN_STEPS": env_int("ENGRAM_CONSOLIDATE_SKILL_MIN_STEPS", 3, minimum=2),
    "CONSOLIDATE_SKILL_MIN_SESSIONS": env_int("ENGRAM_CONSOLIDATE_SKILL_SESSIONS", 2, minimum=2),
    "CONSOLIDATE_SKILL_MAX_DRAFTS": env_int("ENGRAM_CONSOLIDATE_SKILL_MAX_DRAFTS", 3, minimum=0),
    "CONSOLIDATE_SKILL_REINFORCE": env_float(
        "ENGRAM_CONSOLIDATE_SKILL_REINFORCE", 0.05, minimum=0.0
    ),
    # reflection: insights and beliefs
    "REFLECT_PERIOD_DAYS": env_int("ENGRAM_REFLECT_PERIOD_DAYS", 7, minimum=1),
    "REFLECT_MIN_EVIDENCE": env_int("ENGRAM_REFLECT_MIN_EVIDENCE", 3, minimum=2),
    "REFLECT_MAX_INSIGHTS": env_int("ENGRAM_REFLECT_MAX_INSIGHTS", 3, minimum=0),
    "REFLECT_NEAR_JACCARD": env_float("ENGRAM_REFLECT_NEAR_JACCARD", 0.5, minimum=0.05),
    "REFLECT_BELIEF_MERGE_JACCARD": env_float(
        "ENGRAM_REFLECT_BELIEF_MERGE_JACCARD", 0.85, minimum=0.1
    ),
    # core compaction: above this fill a block is densified down to the target
    "CORE_COMPACT_ABOVE": env_float("ENGRAM_CORE_COMPACT_ABOVE", 0.8, minimum=0.1),
    "CORE_COMPACT_TARGET": env_float("ENGRAM_CORE_COMPACT_TARGET", 0.7, minimum=0.1),
    # decay: score = exp(-age / strength) x importance, with strength =
    # half-life x (1 + ln frequency) / ln 2; below ARCHIVE_BELOW a fact is archived.
    "DECAY_HALF_LIFE_DAYS": env_float("ENGRAM_DECAY_HALF_LIFE_DAYS", 30.0, minimum=0.01),
    "DECAY_ARCHIVE_BELOW": env_float("ENGRAM_DECAY_ARCHIVE_BELOW", 0.05, minimum=0.0),
    "DECAY_MIN_AGE_DAYS": env_float("ENGRAM_DECAY_MIN_AGE_DAYS", 14.0, minimum=0.0),
    "DECAY_PROTECT_IMPORTANCE": env_float("ENGRAM_DECAY_PROTECT_IMPORTANCE", 0.8, minimum=0.0),
    "DECAY_EVENT_HORIZON_DAYS": env_float("ENGRAM_DECAY_EVENT_HORIZON_DAYS", 90.0, minimum=0.01),
    "ENV_REFRESH_MINUTES": env_int("ENGRAM_ENV_REFRESH_MINUTES", 60, minimum=1),
}

# --- Beat schedule ------------------------------------------------------------------
# Built from the settings above so an operator changes intervals with ENGRAM_*
# variables; each entry expires so a backlog of stale ticks is never replayed.
CELERY_BEAT_SCHEDULE = {
    "sweep-ingest-outbox": {
        "task": "memory.sweep_outbox",
        "schedule": float(ENGRAM["SWEEP_INTERVAL_SECONDS"]),
        "options": {"expires": float(ENGRAM["SWEEP_INTERVAL_SECONDS"])},
    },
    "embed-pending": {
        "task": "memory.embed_pending",
        "schedule": float(ENGRAM["EMBED_SWEEP_SECONDS"]),
        "options": {"expires": float(ENGRAM["EMBED_SWEEP_SECONDS"])},
    },
    "slot-palaces": {
        "task": "memory.slot_palaces",
        "schedule": 600.0,
        "options": {"expires": 600.0},
    },
    "refresh-environment": {
        "task": "environment.refresh_probe",
        "schedule": ENGRAM["ENV_REFRESH_MINUTES"] * 60.0,
        "options": {"expires": ENGRAM["ENV_REFRESH_MINUTES"] * 60.0},
    },
}


def _daily_crontab(value: str) -> crontab:
    # ENGRAM_CONSOLIDATE_DAILY_AT is HH:MM in UTC (the Celery app's timezone).
    try:
        hour, minute = (int(part) for part in value.split(":"))
        if not (0 <= hour < 24 and 0 <= minute < 60):
            raise ValueError
    except ValueError:
        raise ImproperlyConfigured(
            f"ENGRAM_CONSOLIDATE_DAILY_AT must be HH:MM (24h, UTC), got {value!r}"
        ) from None
    return crontab(hour=hour, minute=minute)


# The consolidator: an idle check (spaces quiet for CONSOLIDATE_IDLE_MINUTES
# get a run) and a daily run of every used space.
CELERY_BEAT_SCHEDULE["consolidate-idle-check"] = {
    "task": "consolidation.idle_check",
    "schedule": float(ENGRAM["CONSOLIDATE_CHECK_SECONDS"]),
    "options": {"expires": float(ENGRAM["CONSOLIDATE_CHECK_SECONDS"])},
}
CELERY_BEAT_SCHEDULE["consolidate-daily"] = {
    "task": "consolidation.daily",
    "schedule": _daily_crontab(ENGRAM["CONSOLIDATE_DAILY_AT"]),
    "options": {"expires": 3600.0},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("ENGRAM_LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The MCP SDK's HTTP client logs every request to a provider at INFO.
        "httpx2": {"level": "WARNING"},
    },
}
