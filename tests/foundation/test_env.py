"""The ENGRAM_* readers fail loudly on values they cannot parse."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from engram_site.env import env_bool, env_choice, env_float, env_int, env_json, env_list, env_str


def test_it_reads_defaults_when_unset(monkeypatch):
    monkeypatch.delenv("ENGRAM_T", raising=False)
    assert env_str("ENGRAM_T", "d") == "d"
    assert env_bool("ENGRAM_T", True) is True
    assert env_int("ENGRAM_T", 3) == 3
    assert env_float("ENGRAM_T", 0.5) == 0.5
    assert env_list("ENGRAM_T", ["a"]) == ["a"]
    assert env_choice("ENGRAM_T", "x", ("x", "y")) == "x"
    assert env_json("ENGRAM_T", []) == []


def test_it_parses_good_values(monkeypatch):
    for raw, expected in [("1", True), ("Yes", True), ("off", False), (" false ", False)]:
        monkeypatch.setenv("ENGRAM_T", raw)
        assert env_bool("ENGRAM_T", not expected) is expected
    monkeypatch.setenv("ENGRAM_T", " 42 ")
    assert env_int("ENGRAM_T", 0, minimum=1) == 42
    monkeypatch.setenv("ENGRAM_T", "a.example, b.example ,,")
    assert env_list("ENGRAM_T", []) == ["a.example", "b.example"]
    monkeypatch.setenv("ENGRAM_T", '[{"base_url": "http://x", "model": "m"}]')
    assert env_json("ENGRAM_T", []) == [{"base_url": "http://x", "model": "m"}]


@pytest.mark.parametrize(
    ("reader", "raw", "message"),
    [
        (lambda: env_bool("ENGRAM_T", False), "maybe", "boolean"),
        (lambda: env_int("ENGRAM_T", 1), "ten", "integer"),
        (lambda: env_int("ENGRAM_T", 1, minimum=5), "4", ">= 5"),
        (lambda: env_float("ENGRAM_T", 1.0), "fast", "number"),
        (lambda: env_float("ENGRAM_T", 1.0, minimum=0.1), "0.01", ">= 0.1"),
        (lambda: env_choice("ENGRAM_T", "a", ("a", "b")), "c", "one of a, b"),
        (lambda: env_json("ENGRAM_T", []), "[{", "valid JSON"),
    ],
)
def test_it_fails_loudly_on_bad_values(monkeypatch, reader, raw, message):
    monkeypatch.setenv("ENGRAM_T", raw)
    with pytest.raises(ImproperlyConfigured) as error:
        reader()
    assert "ENGRAM_T" in str(error.value) and message in str(error.value)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ENGRAM_DEBUG", "sometimes", "ENGRAM_DEBUG must be a boolean"),
        ("ENGRAM_MAX_BODY_BYTES", "10", "ENGRAM_MAX_BODY_BYTES must be >= 1024"),
        ("ENGRAM_DATABASE_URL", "mysql://u@h/db", "sqlite:// or postgres://"),
        ("ENGRAM_EMBEDDINGS", "magic", "ENGRAM_EMBEDDINGS must be one of"),
    ],
)
def test_it_refuses_to_start_with_a_bad_setting(tmp_path, name, value, message):
    env = {"PATH": "/usr/bin:/bin", "ENGRAM_DATA_DIR": str(tmp_path), name: value}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr
