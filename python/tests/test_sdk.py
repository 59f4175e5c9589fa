"""The SDK's pure parts (no server): what a conversation's input holds, the key kept out of it, the
statuses as the seed prints them, and the workflow's answers read with pydantic."""

from __future__ import annotations

import os
import warnings

import pytest
from pydantic import BaseModel, SecretStr, ValidationError

from faheemcode.errors import InvalidRequestError
from faheemcode.sdk import LLM, Agent, ConversationState, Event, ExecutionStatus, Tool, WorkerKeyWarning
from faheemcode.sdk.conversation import (
    check_conversation_id,
    check_existing_conversation_id,
    check_message,
    conversation_input,
)
from faheemcode.tools.file_editor import FileEditorTool
from faheemcode.tools.terminal import TerminalTool


def test_the_seed_agent_becomes_the_typescript_agent_spec() -> None:
    llm = LLM(usage_id="agent", model="openai/gpt-4o", base_url="http://127.0.0.1:9/v1")
    agent = Agent(llm=llm, tools=[Tool(name=TerminalTool.name), Tool(name=FileEditorTool.name)])
    assert agent.spec() == {
        "llm": {"usageId": "agent", "model": "openai/gpt-4o", "baseUrl": "http://127.0.0.1:9/v1"},
        "tools": ["terminal", "file_editor", "think", "finish"],
    }
    # Names, tool classes and Tools alike; think and finish once.
    assert Agent(llm=llm, tools=["terminal", FileEditorTool, "finish"]).spec()["tools"] == [
        "terminal",
        "file_editor",
        "finish",
        "think",
    ]


def test_fallbacks_travel_in_the_spec_and_bad_ones_are_refused() -> None:
    llm = LLM(model="openai/gpt-4o", fallbacks=["anthropic/claude-sonnet-4-6"])
    assert llm.spec() == {
        "usageId": "agent",
        "model": "openai/gpt-4o",
        "fallbacks": ["anthropic/claude-sonnet-4-6"],
    }
    assert "fallbacks" not in LLM(model="openai/gpt-4o").spec()
    for bad in (["a,b"], [""], ["m"] * 8):
        with pytest.raises(ValidationError):
            LLM(model="openai/gpt-4o", fallbacks=bad)


def test_the_key_stays_out_of_the_conversation_and_is_said_once() -> None:
    import faheemcode.sdk.llm as llm_module

    llm_module._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        llm = LLM(usage_id="agent", model="m", api_key=SecretStr("sk-secret-1"))
        LLM(model="m", api_key=SecretStr("sk-secret-2"))
    assert [w.category for w in caught] == [WorkerKeyWarning]
    assert caught[0].filename == __file__  # it points at the caller's line
    assert "worker" in str(caught[0].message)
    inputs = conversation_input(Agent(llm=llm), "/tmp/ws", env={})
    assert (
        "sk-secret" not in repr(inputs)
        and "sk-secret" not in repr(llm)
        and "sk-secret" not in llm.model_dump_json()
    )


def test_a_conversation_input_as_the_typescript_client_builds_it() -> None:
    agent = Agent(llm=LLM(model="openai/gpt-4o"))
    inputs = conversation_input(agent, "ws", max_iterations=7, env={"FAHEEM_TASK_QUEUE": "q"})
    options = inputs["options"]
    assert options["workspace"] == os.path.abspath("ws")
    assert options["toolTaskQueue"].startswith("q-tools@")
    assert options["maxIterations"] == 7
    assert options["confirmationPolicy"] == "never"
    assert options["idleTimeoutMs"] == 7 * 24 * 3600 * 1000
    assert (
        conversation_input(agent, "ws", env={"FAHEEM_TOOL_TASK_QUEUE": "tools"})["options"]["toolTaskQueue"]
        == "tools"
    )
    with pytest.raises(InvalidRequestError, match="never, always or risky"):
        conversation_input(agent, "ws", confirmation_policy="sometimes", env={})  # type: ignore[arg-type]


def test_an_output_schema_from_a_mapping_or_a_pydantic_model() -> None:
    agent = Agent(llm=LLM(model="openai/gpt-4o"))

    class Verdict(BaseModel):
        files: int
        ok: bool

    schema = conversation_input(agent, "ws", output_schema=Verdict, env={})["options"]["outputSchema"]
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"files", "ok"}
    plain = {"type": "array", "items": {"type": "string"}}
    assert conversation_input(agent, "ws", output_schema=plain, env={})["options"]["outputSchema"] == plain
    assert "outputSchema" not in conversation_input(agent, "ws", env={})["options"]
    with pytest.raises(InvalidRequestError, match="JSON Schema"):
        conversation_input(agent, "ws", output_schema="{}", env={})  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="over 64 KiB"):
        conversation_input(agent, "ws", output_schema={"description": "x" * 70_000}, env={})


def test_messages_and_ids_are_checked_before_they_are_sent() -> None:
    assert check_message("hi") == "hi"
    with pytest.raises(InvalidRequestError, match="empty"):
        check_message("  ")
    with pytest.raises(InvalidRequestError, match="longer than 100000"):
        check_message("x" * 100_001)
    assert check_conversation_id("conv-1:a.b_c") == "conv-1:a.b_c"
    for bad in ("", "-x", "a..b", "a/b", "x" * 129):
        with pytest.raises(InvalidRequestError, match="not valid"):
            check_conversation_id(bad)


def test_an_existing_id_may_be_a_sub_agents_or_older_but_never_a_path() -> None:
    for ok in ("conv-1.sub-2", "conv-1.sub-2.sub-1", "an older id with spaces", "x" * 255):
        assert check_existing_conversation_id(ok) == ok
    for bad in ("", ".hidden", "a/b", "a\\b", "a..b", "tab\there", "x" * 256):
        with pytest.raises(InvalidRequestError, match="not valid"):
            check_existing_conversation_id(bad)


def test_a_tool_name_is_checked() -> None:
    with pytest.raises(ValidationError, match="not a tool name"):
        Tool(name="rm -rf")


def test_statuses_print_as_the_seed_shows_them() -> None:
    assert [s.value for s in ExecutionStatus] == [
        "idle",
        "running",
        "paused",
        "waiting_for_confirmation",
        "finished",
        "error",
        "stuck",
    ]
    assert f"{ExecutionStatus.PAUSED}" == "paused" == str(ExecutionStatus.PAUSED)
    assert ExecutionStatus.PAUSED == "paused"


def test_the_state_query_answer_is_read_from_camel_case() -> None:
    raw = {
        "id": "conv-1",
        "status": "paused",
        "iterations": 2,
        "runNumber": 1,
        "events": 9,
        "pendingMessages": 1,
        "metrics": {
            "accumulatedCost": 0.5,
            "promptTokens": 10,
            "completionTokens": 2,
            "cacheReadTokens": 0,
            "llmCalls": 2,
            "calls": [],
        },
        "lastError": None,
        "workspace": "/w",
        "model": "openai/gpt-4o",
        "terminal": {"cwd": "/w", "env": {}},
        "closed": False,
        "pendingActions": [],
        "runCost": 0.5,
        "children": [],
        "finalMessage": None,
        "somethingNewer": True,
    }
    state = ConversationState.model_validate(raw)
    assert state.execution_status is ExecutionStatus.PAUSED
    assert (
        state.run_number,
        state.pending_messages,
        state.metrics.accumulated_cost,
        state.metrics.llm_calls,
    ) == (1, 1, 0.5, 2)
    with pytest.raises(ValidationError):
        ConversationState.model_validate({**raw, "status": "dancing"})


def test_events_keep_their_kind_specific_fields() -> None:
    e = Event.model_validate(
        {
            "index": 3,
            "timestamp": "2026-12-04T00:00:00Z",
            "kind": "action",
            "source": "agent",
            "tool": "terminal",
            "toolCallId": "c1",
        }
    )
    assert (e.index, e.kind, e.get("tool"), e.get("toolCallId"), e.get("missing", 0)) == (
        3,
        "action",
        "terminal",
        "c1",
        0,
    )
