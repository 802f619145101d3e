"""ENGRAM_PROVIDERS is checked at start-up: a bad value stops the process
with an error naming the variable and what is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memory.services.providers.config import parse

GOOD = {"name": "notes", "command": ["npx", "-y", "@modelcontextprotocol/server-memory"]}


def test_a_good_list_parses_with_defaults() -> None:
    (stdio, http) = parse(
        [
            GOOD,
            {
                "name": "zep-1",
                "url": "https://memory.example/mcp",
                "headers": {"Authorization": "Bearer x"},
                "mode": "hybrid",
                "timeout": 0.5,
                "mirror_writes": True,
                "spaces": ["alpha"],
            },
        ]
    )
    assert (stdio.mode, stdio.timeout, stdio.transport, stdio.spaces) == (
        "prefetch",
        1.0,
        "stdio",
        frozenset(),
    )
    assert stdio.prefetch and not stdio.tools
    assert http.tools and http.prefetch and http.transport == "http"
    assert http.allows("alpha") and not http.allows("beta")
    assert parse([]) == () and parse(None) == ()


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"name": "x"}, "must be a JSON list"),
        (["notes"], "must be an object"),
        ([{**GOOD, "name": "Not OK"}], "name must match"),
        ([{**GOOD, "name": ""}], "name must match"),
        ([GOOD, GOOD], "names must be unique: notes"),
        ([{"name": "a"}], "exactly one of command"),
        ([{**GOOD, "url": "http://x/mcp"}], "exactly one of command"),
        ([{**GOOD, "command": "npx server"}], "command must be a non-empty list"),
        ([{"name": "a", "url": "ftp://x"}], "url must be an http(s) URL"),
        ([{**GOOD, "mode": "always"}], "mode must be one of prefetch, tools, hybrid"),
        ([{**GOOD, "timeout": 0}], "timeout must be seconds"),
        ([{**GOOD, "timeout": "1"}], "timeout must be seconds"),
        ([{**GOOD, "mirror_writes": "yes"}], "mirror_writes must be true or false"),
        ([{**GOOD, "spaces": "alpha"}], "spaces must be a list"),
        ([{**GOOD, "headers": {"X": "1"}}], "headers apply to a url provider only"),
        ([{**GOOD, "tiemout": 1}], "unknown key(s) tiemout"),
    ],
)
def test_bad_values_name_the_variable_and_the_problem(raw: object, says: str) -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        parse(raw)
    assert "ENGRAM_PROVIDERS" in str(caught.value)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("value", "says"),
    [('[{"name": "a"}]', "exactly one of command"), ("[not json", "must be valid JSON")],
)
def test_a_bad_value_stops_start_up(value: str, says: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "ENGRAM_PROVIDERS": value},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "ENGRAM_PROVIDERS" in done.stderr and says in done.stderr


def test_a_good_value_starts() -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "ENGRAM_PROVIDERS": json.dumps([GOOD])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
