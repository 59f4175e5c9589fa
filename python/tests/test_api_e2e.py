"""The API beyond the seed's script, against a dev server, a TypeScript worker and the scripted
model: events followed as they are recorded, pause from another thread, refusals and a closed
conversation told as such. Ordered by events and a model gate, never by sleeps."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from faheemcode.errors import ConversationClosedError, InvalidRequestError
from faheemcode.sdk import LLM, Agent, Conversation, ExecutionStatus, Tool

from conftest import Stack, start_stack


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "encrypted"])
def stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    # The countdown's second model call is held at the gate "api" (never released). Encrypted, the
    # workflow's refusal reaches this client inside the failure's encoded (encrypted) attributes.
    encrypt = bool(request.param)
    s = start_stack(f"python-api-{'enc' if encrypt else 'plain'}", encrypt=encrypt, gates={1: "api"})
    yield s
    s.stop()


@pytest.mark.e2e
def test_follow_pause_from_a_thread_refusals_and_close(stack: Stack, tmp_path: Path) -> None:
    env = stack.env
    llm = LLM(usage_id="agent", model=env["LLM_MODEL"], base_url=env["LLM_BASE_URL"])
    conversation = Conversation(Agent(llm=llm, tools=[Tool(name="terminal")]), workspace=tmp_path, env=env)
    assert conversation.state.execution_status is ExecutionStatus.IDLE
    index = conversation.send_message("Create a file called countdown.txt with 100 down to 1.")
    assert index == 0

    runner = threading.Thread(target=conversation.run)
    runner.start()
    # Follow the log until the first command's result: the next model call is then held at the gate.
    seen = []
    for event in conversation.events(follow=True):
        seen.append(event.kind)
        if event.kind == "observation":
            assert event.get("tool") == "terminal" and event.get("exitCode") == 0
            break
    assert seen[0] == "message"
    # Applied when it returns: the state reads paused at once, before run() in the thread has returned.
    assert conversation.pause(wait=True) is ExecutionStatus.PAUSED
    assert conversation.state.execution_status is ExecutionStatus.PAUSED
    runner.join(timeout=120)  # a deadline for a loaded machine; run() returns once the pause lands
    assert not runner.is_alive()
    state = conversation.state
    assert state.execution_status is ExecutionStatus.PAUSED
    assert (tmp_path / "countdown.txt").read_text().split() == [str(n) for n in range(100, 90, -1)]
    assert llm.metrics.llm_calls == state.metrics.llm_calls >= 1

    # Refusals: checked here before sending, or by the workflow's validator (its reason kept).
    with pytest.raises(InvalidRequestError, match="empty"):
        conversation.send_message("   ")
    with pytest.raises(InvalidRequestError, match="nothing is waiting for confirmation"):
        conversation.approve()

    # Another process's view (attach) sees the same conversation and its events.
    other = Conversation.attach(conversation.id, env=env)
    assert other.state.execution_status is ExecutionStatus.PAUSED
    assert [e.index for e in other.events()] == list(range(state.events))
    assert other.agent.llm.model == env["LLM_MODEL"]

    conversation.close()
    # A follow ends when the conversation closes (were it still open, this would wait for news for
    # ever); then a message is refused as closed.
    for _ in conversation.events(from_index=state.events, follow=True):
        pass
    with pytest.raises(ConversationClosedError):
        conversation.send_message("Are you there?")
    conversation.close()  # closing twice is fine
