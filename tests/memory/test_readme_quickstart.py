"""The README's agent quickstart runs as printed: against a live Engram and a
fake OpenAI-compatible chat server that asks for one tool call, it posts the
turns, puts /context in the system prompt, offers the /tools manifest, runs
the tool at the path the manifest gives and hands its answer back."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from memory.models import Turn
from tests.fakes.llm_server import FakeLLM, Reply

pytestmark = pytest.mark.django_db(transaction=True)


def quickstart() -> str:
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    section = readme[readme.index("### A minimal agent") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README lost its quickstart"
    return match.group(1)


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        }
    )


def test_the_readme_agent_quickstart_runs_as_printed(
    live_server, api, api_key, space, tmp_path, capsys
):
    api.post(
        "/api/v1/turns",
        {"session_id": "s0", "role": "user", "text": "My sister Anna moved to Lisbon last spring."},
        content_type="application/json",
    )
    key_file = tmp_path / "api-key.txt"
    key_file.write_text(api_key + "\n")
    with FakeLLM() as chat:
        chat.push(
            Reply(raw=tool_call("memory_search", {"query": "sister Anna", "k": 3})),
            Reply(content="Your sister Anna moved to Lisbon."),
        )
        code = (
            quickstart()
            .replace('"http://127.0.0.1:8000"', repr(live_server.url))
            .replace('"http://127.0.0.1:11434/v1"', repr(chat.base_url))
            .replace('open("data/api-key.txt")', f"open({str(key_file)!r})")
        )
        exec(compile(code, "README.md quickstart", "exec"), {})
    assert capsys.readouterr().out.strip() == "Your sister Anna moved to Lisbon."

    first, second = chat.requests
    assert "<engram-recalled>" in first["messages"][0]["content"]
    assert {t["function"]["name"] for t in first["tools"]} >= {"memory_search", "memory_save"}
    [tool] = [m for m in second["messages"] if m["role"] == "tool"]
    results = json.loads(tool["content"])["results"]
    assert any("Lisbon" in r["text"] for r in results)
    texts = list(Turn.objects.filter(space=space, session__external_id="s1").values_list("text"))
    assert texts == [("Where did my sister move to?",), ("Your sister Anna moved to Lisbon.",)]
