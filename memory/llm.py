"""The LLM boundary: JSON answers from the configured providers, in order.

Every provider is an OpenAI-compatible `/v1/chat/completions` endpoint (OpenAI,
Ollama, vLLM, llama.cpp server, ...) reached over httpx with explicit timeouts.
`complete_json` asks for a JSON object, validates it with a pydantic schema,
sends one repair request when the answer does not validate, then moves on to
the next provider. Every HTTP request counts against the space's hourly budget,
taken with a conditional UPDATE so concurrent workers cannot overspend.

Callers must not hold a database transaction open around these calls.

Errors: `TransientError` (timeouts, 5xx, 429, connection failures, and
`InvalidAnswer`, an answer still invalid after the repair request: worth
retrying later), `PermanentError` (4xx, a body that is no chat completion),
`BudgetExceeded`, and `LLMUnavailable` (no provider configured, or every
provider failed; `ProvidersDown` when every failure was transient, so a task's
`autoretry_for=(TransientError,)` retries it).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import httpx
import pydantic
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from engram_site import running
from memory.models import LlmUsage, Space
from memory.screening.redaction import redact

log = logging.getLogger(__name__)

M = TypeVar("M", bound=pydantic.BaseModel)


class LLMError(Exception):
    pass


class TransientError(LLMError):
    """Timeouts, connection failures, 429 and 5xx: retry later."""


class InvalidAnswer(TransientError):
    """Not the JSON asked for, even after the repair request. A flaky or
    overloaded model seldom repeats itself, so the job is retried with
    backoff like a timeout; one that always answers so is dead-lettered
    after ENGRAM_JOB_MAX_ATTEMPTS, its last answer's error kept."""


class PermanentError(LLMError):
    """Bad request, auth failure, or an answer that does not validate."""


class BudgetExceeded(LLMError):
    """The space used its hourly LLM call budget."""


class LLMUnavailable(LLMError):
    """No provider configured, or every provider failed."""


class ProvidersDown(LLMUnavailable, TransientError):
    """Every configured provider failed with a transient error."""


@dataclass(frozen=True)
class Provider:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 30.0
    name: str = ""

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        if not base.endswith("/v1"):
            base += "/v1"
        return base + "/chat/completions"


def providers() -> list[Provider]:
    default_timeout = float(settings.ENGRAM["LLM_TIMEOUT_SECONDS"])
    out: list[Provider] = []
    for i, raw in enumerate(settings.ENGRAM["LLM_PROVIDERS"] or []):
        if not isinstance(raw, dict) or not raw.get("base_url") or not raw.get("model"):
            log.warning("ENGRAM_LLM_PROVIDERS[%s] needs base_url and model; ignored", i)
            continue
        out.append(
            Provider(
                base_url=str(raw["base_url"]),
                model=str(raw["model"]),
                api_key=str(raw.get("api_key") or ""),
                timeout=float(raw.get("timeout") or default_timeout),
                name=str(raw.get("name") or f"provider{i}"),
            )
        )
    return out


def providers_configured() -> bool:
    return bool(providers())


# --- call counting ---------------------------------------------------------------------


@dataclass
class CallCounter:
    calls: int = 0
    by_purpose: dict[str, int] | None = None

    def add(self, purpose: str) -> None:
        self.calls += 1
        if self.by_purpose is None:
            self.by_purpose = {}
        self.by_purpose[purpose] = self.by_purpose.get(purpose, 0) + 1


_counters: contextvars.ContextVar[tuple[CallCounter, ...]] = contextvars.ContextVar(
    "engram_llm_counters", default=()
)


@contextlib.contextmanager
def count_calls() -> Iterator[CallCounter]:
    """Count the HTTP calls made inside the block (nested blocks all count):
    `with llm.count_calls() as c: ...; c.calls`."""
    counter = CallCounter()
    token = _counters.set((*_counters.get(), counter))
    try:
        yield counter
    finally:
        _counters.reset(token)


# --- budget --------------------------------------------------------------------------------


def _hour(now: datetime) -> datetime:
    return now.replace(minute=0, second=0, microsecond=0)


def take_budget(*, space: Space, calls: int = 1) -> None:
    """Count `calls` against this hour's budget or raise BudgetExceeded. A budget
    of 0 means no cap."""
    budget = int(settings.ENGRAM["LLM_BUDGET_PER_HOUR"])
    hour = _hour(timezone.now())
    row = LlmUsage.objects.filter(space=space, hour=hour)
    if not row.exists():
        try:
            with transaction.atomic():
                LlmUsage.objects.create(space=space, hour=hour, calls=0)
        except IntegrityError:
            pass  # another worker created this hour's row first
    if budget <= 0:
        row.update(calls=F("calls") + calls)
        return
    if row.filter(calls__lte=budget - calls).update(calls=F("calls") + calls) != 1:
        raise BudgetExceeded(f"space {space.name!r} used its {budget} LLM calls this hour")


def usage_this_hour(*, space: Space) -> int:
    row = LlmUsage.objects.filter(space=space, hour=_hour(timezone.now())).first()
    return row.calls if row else 0


# --- the call --------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def _parse(content: str, schema: type[M]) -> M:
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # Some models wrap the object in prose; take the outermost braces.
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError(f"not JSON: {exc}") from None
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError as exc2:
            raise ValueError(f"not JSON: {exc2}") from None
    return schema.model_validate(data)


_clients: dict[tuple[str, float, int], httpx.Client] = {}


def _client(provider: Provider) -> httpx.Client:
    """One keep-alive client per provider and process (a worker makes many
    small calls; a new TCP connection each time doubles their latency)."""
    key = (provider.url, provider.timeout, os.getpid())
    client = _clients.get(key)
    if client is None:
        timeout = httpx.Timeout(provider.timeout, connect=min(5.0, provider.timeout))
        client = _clients[key] = httpx.Client(timeout=timeout)
    return client


def _post(
    provider: Provider,
    messages: list[dict[str, str]],
    *,
    space: Space,
    purpose: str,
    deadline: float | None = None,
) -> str:
    """One chat completion. With `deadline` (a time.monotonic() instant) the
    whole request (connect, send, every read) ends by then: past it the
    request is abandoned and answers TransientError "timed out", however
    the server dribbles its answer."""
    take_budget(space=space)
    for counter in _counters.get():
        counter.add(purpose)
    body: dict[str, Any] = {
        "model": provider.model,
        "messages": messages,
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }
    headers = {"Content-Type": "application/json"}
    if provider.api_key:
        headers["Authorization"] = f"Bearer {provider.api_key}"
    running.step_aside()  # a web request waits on the LLM from here
    try:
        if deadline is None:
            response = _client(provider).post(provider.url, json=body, headers=headers)
        else:
            response = _post_by(provider, body, headers, deadline)
    except httpx.TimeoutException as exc:
        raise TransientError(f"{provider.name}: timed out ({exc.__class__.__name__})") from exc
    except httpx.TransportError as exc:
        raise TransientError(f"{provider.name}: {exc.__class__.__name__}: {exc}") from exc
    if response.status_code == 429 or response.status_code >= 500:
        raise TransientError(f"{provider.name}: HTTP {response.status_code}")
    if response.status_code >= 400:
        raise PermanentError(f"{provider.name}: HTTP {response.status_code}: {response.text[:200]}")
    try:
        payload = response.json()
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise PermanentError(f"{provider.name}: not a chat completion: {exc!r}") from None
    if not isinstance(content, str):
        raise PermanentError(f"{provider.name}: message content is not text")
    return content


def _post_by(
    provider: Provider, body: dict[str, Any], headers: dict[str, str], deadline: float
) -> httpx.Response:
    """The POST on a thread of its own, waited for until `deadline`: httpx's
    timeouts bound each connect and read, not their sum, so a server sending
    a byte now and then would hold the caller for as long as it liked. The
    thread does no database work (the budget is taken before), and an
    abandoned one ends by its own per-read timeout, capped at the time left."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TransientError(f"{provider.name}: timed out (deadline passed before the request)")
    timeout = httpx.Timeout(left, connect=min(5.0, left))
    outcome: dict[str, Any] = {}

    def send() -> None:
        try:
            outcome["response"] = _client(provider).post(
                provider.url, json=body, headers=headers, timeout=timeout
            )
        except BaseException as exc:  # handed to the waiting caller
            outcome["error"] = exc

    worker = threading.Thread(target=send, name=f"llm-{provider.name}", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        raise TransientError(f"{provider.name}: timed out (deadline of the request)")
    if "error" in outcome:
        raise outcome["error"]
    response: httpx.Response = outcome["response"]
    return response


def _schema_hint(schema: type[pydantic.BaseModel]) -> str:
    return json.dumps(schema.model_json_schema(), separators=(",", ":"))


def _messages(system: str, user: str, schema: type[pydantic.BaseModel]) -> list[dict[str, str]]:
    system_full = (
        f"{system}\n\nAnswer with one JSON object and nothing else. "
        f"It must validate against this JSON schema:\n{_schema_hint(schema)}"
    )
    # What is stored was redacted on the way in; this is the last door for
    # anything else (a query, a legacy row) on its way to a provider.
    return [{"role": "system", "content": system_full}, {"role": "user", "content": redact(user)}]


def ask_once(
    provider: Provider,
    *,
    space: Space,
    purpose: str,
    system: str,
    user: str,
    schema: type[M],
    deadline: float | None = None,
) -> M:
    """One request to one provider, no repair request and no fallback to the
    next provider: for a caller on a deadline with an answer of its own to
    fall back on (the write judge). `deadline` (time.monotonic()) bounds the
    whole request. Raises TransientError (InvalidAnswer for an answer that
    does not validate), PermanentError or BudgetExceeded."""
    content = _post(
        provider, _messages(system, user, schema), space=space, purpose=purpose, deadline=deadline
    )
    try:
        return _parse(content, schema)
    except (ValueError, pydantic.ValidationError) as exc:
        raise InvalidAnswer(f"{provider.name}: invalid answer: {str(exc)[:300]}") from None


def complete_json(*, space: Space, purpose: str, system: str, user: str, schema: type[M]) -> M:
    """Ask the providers in order for a JSON object matching `schema`."""
    chain = providers()
    if not chain:
        raise LLMUnavailable("no LLM provider configured")
    messages = _messages(system, user, schema)
    errors: list[str] = []
    all_transient = True
    for provider in chain:
        try:
            content = _post(provider, messages, space=space, purpose=purpose)
            try:
                return _parse(content, schema)
            except (ValueError, pydantic.ValidationError) as exc:
                problem = str(exc)[:1000]
            # One repair request: show the model its answer and what was wrong.
            repair = [
                *messages,
                {"role": "assistant", "content": content[:8000]},
                {
                    "role": "user",
                    "content": "That answer was not valid: "
                    f"{problem}\nReply again with only the corrected JSON object.",
                },
            ]
            content = _post(provider, repair, space=space, purpose=f"{purpose}:repair")
            try:
                return _parse(content, schema)
            except (ValueError, pydantic.ValidationError) as exc:
                raise InvalidAnswer(
                    f"{provider.name}: invalid JSON after repair: {str(exc)[:300]}"
                ) from None
        except BudgetExceeded:
            raise
        except TransientError as exc:
            log.warning("LLM %s (%s) transient failure: %s", provider.name, purpose, exc)
            errors.append(str(exc))
        except PermanentError as exc:
            log.warning("LLM %s (%s) failed: %s", provider.name, purpose, exc)
            errors.append(str(exc))
            all_transient = False
    detail = "; ".join(errors)
    if all_transient:
        raise ProvidersDown(f"every LLM provider failed ({purpose}): {detail}")
    raise LLMUnavailable(f"every LLM provider failed ({purpose}): {detail}")
