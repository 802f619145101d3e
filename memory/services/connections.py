"""The Ops view's "test connection": one small real call to an LLM provider
or to the embeddings backend, with a short timeout, answered as an outcome
(never raised): a curator checking a configuration wants to read what went
wrong, not a 500."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings

from memory import embeddings, llm

TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class Outcome:
    ok: bool
    target: str
    detail: str
    elapsed_ms: float


def providers() -> list[dict[str, Any]]:
    """The configured LLM providers as the page shows them (no keys)."""
    return [
        {"index": i, "name": p.name, "model": p.model, "url": p.url, "has_key": bool(p.api_key)}
        for i, p in enumerate(llm.providers())
    ]


def embeddings_config() -> dict[str, Any]:
    conf = settings.ENGRAM
    return {
        "backend": conf["EMBEDDINGS"],
        "url": conf["EMBEDDINGS_URL"],
        "model": conf["EMBEDDINGS_MODEL"],
        "enabled": conf["EMBEDDINGS"] != "none",
    }


def check_llm(index: int) -> Outcome:
    """One chat completion of a few tokens from provider `index`, outside the
    space's LLM budget (it is the operator's check, not memory work)."""
    found = llm.providers()
    if not 0 <= index < len(found):
        return Outcome(False, f"provider {index}", "no such provider is configured", 0.0)
    provider = found[index]
    timeout = min(TIMEOUT_SECONDS, provider.timeout)
    headers = {"Content-Type": "application/json"}
    if provider.api_key:
        headers["Authorization"] = f"Bearer {provider.api_key}"
    body = {
        "model": provider.model,
        "messages": [{"role": "user", "content": 'Answer with the JSON object {"ok": true}.'}],
        "temperature": 0,
        "max_tokens": 10,
    }
    started = time.monotonic()
    try:
        response = httpx.post(
            provider.url,
            json=body,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(2.0, timeout)),
        )
    except httpx.HTTPError as exc:
        return Outcome(False, provider.name, f"{type(exc).__name__}: {exc}"[:300], _ms(started))
    elapsed = _ms(started)
    if response.status_code != 200:
        return Outcome(
            False, provider.name, f"HTTP {response.status_code}: {response.text[:200]}", elapsed
        )
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Outcome(False, provider.name, "the answer is not a chat completion", elapsed)
    return Outcome(True, provider.name, f"answered: {str(content)[:80]}", elapsed)


def check_embeddings() -> Outcome:
    """Embed one short text with the configured backend, no retries."""
    conf = embeddings_config()
    target = f"{conf['backend']}:{conf['model'] or 'default'}"
    if not conf["enabled"]:
        return Outcome(False, target, "embeddings are turned off (ENGRAM_EMBEDDINGS=none)", 0.0)
    started = time.monotonic()
    try:
        found = embeddings.backend()
        vectors = found.embed(["connection test"], retries=0, timeout=TIMEOUT_SECONDS)
    except Exception as exc:  # any failure is the outcome the curator reads
        return Outcome(False, target, f"{type(exc).__name__}: {exc}"[:300], _ms(started))
    return Outcome(True, target, f"one vector of {vectors.shape[-1]} dimensions", _ms(started))


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
