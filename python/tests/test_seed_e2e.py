"""The seed's ready-to-run example, unchanged, run with ``python`` against a dev server, a
TypeScript worker and the scripted model: the pause lands mid-task, the message sent while paused
is kept, ``run()`` again finishes with hello.txt, the cost is printed, no key is in the history.
With encryption off and on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from faheemcode.codec import encryption_codec
from faheemcode.connection import LOOP, _connect
from faheemcode.errors import ConversationNotFoundError, DecryptionError
from faheemcode.sdk import Conversation, ExecutionStatus

from conftest import FAKE_KEY, Stack, start_stack
from history_text import history_text
from seed_page import FIXTURE, ready_to_run_example

PAUSED_MESSAGE = "Actually, stop working on countdown.txt."


def run_seed(stack: Stack, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, str]]:
    # The page's example, unchanged (test_seed_page checks examples/pause-and-resume.py is it too).
    script = tmp_path / "seed.py"
    script.write_text(ready_to_run_example(FIXTURE.read_text(encoding="utf-8")), encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # What a user's shell holds: the server, the key, the model and its endpoint (as the worker has them).
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "FAHEEM_", "LLM_"))},
        **{k: stack.env[k] for k in ("TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "FAHEEM_HOME")},
        "LLM_API_KEY": FAKE_KEY,
        "LLM_MODEL": stack.env["LLM_MODEL"],
        "LLM_BASE_URL": stack.env["LLM_BASE_URL"],
        "PYTHONUNBUFFERED": "1",
    }
    if "FAHEEM_ENCRYPTION_KEY" in stack.env:
        env["FAHEEM_ENCRYPTION_KEY"] = stack.env["FAHEEM_ENCRYPTION_KEY"]
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a deadline for a loaded machine, not a timing
    )
    return result, workspace, env


def only_conversation(env: dict[str, str]) -> str:
    async def ids() -> list[str]:
        client = await _connect(env)
        return [w.id async for w in client.list_workflows("WorkflowType = 'conversation'")]

    found = LOOP.run(ids())
    assert len(found) == 1, found
    return found[0]


@pytest.mark.e2e
@pytest.mark.parametrize("encrypt", [False, True], ids=["plain", "encrypted"])
def test_the_seed_script_runs_unchanged(encrypt: bool, tmp_path: Path, stack_factory: list[Stack]) -> None:
    # The countdown's second model call is held at a gate: the countdown cannot end before the
    # seed's pause (after its 2-second sleep), however slow the machine.
    stack = start_stack(
        f"python-seed-{'enc' if encrypt else 'plain'}", encrypt=encrypt, gates={1: "countdown"}
    )
    stack_factory.append(stack)

    result, workspace, env = run_seed(stack, tmp_path)
    out = result.stdout
    assert result.returncode == 0, f"{out}\n{result.stderr}\n{''.join(stack.output)}"

    assert "Initial status: idle" in out
    assert "Agent status after pause: paused" in out
    assert "Status before resume: paused" in out
    assert "Final status: finished" in out
    cost = re.search(r"^EXAMPLE_COST: (\S+)$", out, re.M)
    assert cost is not None, out

    # run() again made hello.txt; the countdown never finished.
    assert (workspace / "hello.txt").read_text() == "Hello, World!\n"
    countdown = workspace / "countdown.txt"
    assert not countdown.exists() or len(countdown.read_text().split()) < 100

    conversation = Conversation.attach(only_conversation(env), env=env)
    state = conversation.state
    assert state.execution_status is ExecutionStatus.FINISHED
    assert float(cost.group(1)) == pytest.approx(state.metrics.accumulated_cost)
    assert state.metrics.llm_calls >= 2

    events = list(conversation.events())
    kinds = [e.kind for e in events]
    pause = kinds.index("pause")
    message = next(e for e in events if e.kind == "message" and PAUSED_MESSAGE in str(e.get("text")))
    # The pause landed in the first run, before it finished; the message sent while paused was kept
    # (recorded after the pause) and the model answered it.
    first_run = events[:pause]
    assert not any(e.kind == "status" and e.get("status") == "finished" for e in first_run)
    assert any(e.kind == "status" and e.get("status") == "running" for e in first_run) or any(
        e.kind == "action" for e in first_run
    )
    assert message.index > events[pause].index
    assert any(e.kind == "action" and "hello.txt" in str(e.get("arguments")) for e in events[message.index :])

    # No key in the history: not in the payloads, decrypted or not, nor anywhere else.
    history = LOOP.run(_history(env, conversation.id))
    codec = encryption_codec(env)
    assert FAKE_KEY not in history_text(history, codec)
    if encrypt:
        assert codec is not None
        raw = history_text(history)
        assert PAUSED_MESSAGE not in raw  # Temporal holds ciphertext only
        assert PAUSED_MESSAGE in history_text(history, codec)  # and it is the message
    conversation.close()

    # Attaching says clearly what is wrong: an unknown id; an encrypted conversation without the key.
    with pytest.raises(ConversationNotFoundError):
        Conversation.attach("conv-not-there", env=env)
    if encrypt:
        keyless = {k: v for k, v in env.items() if k != "FAHEEM_ENCRYPTION_KEY"}
        with pytest.raises(DecryptionError, match="encrypted and this process has no key"):
            Conversation.attach(conversation.id, env=keyless)


async def _history(env: dict[str, str], conversation_id: str):  # type: ignore[no-untyped-def]
    client = await _connect(env)
    return await client.get_workflow_handle(conversation_id).fetch_history()
