"""OpenHands' side of bench/pause-peer.ts: a Conversation with the terminal tool against the bench's
scripted model, paused mid model call when told.

Usage: python openhands_pause.py BASE_URL WORKSPACE

Reads commands on stdin, one a line, and prints one JSON line for each (stdout; anything else the
SDK prints there is ignored by the bench, since it does not start with "{"):
  run        starts conversation.run() in a thread (the first runs the first message);
  pause      times conversation.pause() from call to return, then waits for run() to return;
  arun       starts conversation.arun() on an event loop in a thread;
  interrupt  times conversation.interrupt() until the state says paused and arun() has returned;
  quit       closes the conversation and exits.
The bench says when: it sees the model call in flight on its server.
"""

import asyncio
import atexit
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from importlib.metadata import version

# Quiet: the SDK logs every step and draws a visualiser; only this script's JSON is read.
os.environ.setdefault("LOG_LEVEL", "ERROR")
logging.disable(logging.WARNING)

from pydantic import SecretStr  # noqa: E402

from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.sdk.conversation.state import ConversationExecutionStatus  # noqa: E402
from openhands.tools.terminal import TerminalTool  # noqa: E402

FIRST_MESSAGE = "pause bench: openhands"


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    base_url, workspace = sys.argv[1], sys.argv[2]
    llm = LLM(
        model="openai/gpt-4o-mini",
        base_url=base_url,
        api_key=SecretStr("bench"),
        usage_id="agent",
        num_retries=0,
    )
    # Its terminal runs `SHELL -i`; ours run `bash --norc --noprofile`: the same flags here, so
    # neither side's shell reads ~/.bashrc (which may run `pyenv init`).
    shell_dir = tempfile.mkdtemp(prefix="openhands-shell-")
    atexit.register(shutil.rmtree, shell_dir, ignore_errors=True)
    shell = os.path.join(shell_dir, "bash")
    with open(shell, "w") as f:
        f.write('#!/bin/sh\nexec /bin/bash --norc --noprofile "$@"\n')
    os.chmod(shell, 0o755)
    terminal = Tool(name=TerminalTool.name, params={"terminal_type": "subprocess", "shell_path": shell})
    agent = Agent(llm=llm, tools=[terminal])
    conversation = Conversation(
        agent=agent,
        workspace=workspace,
        visualizer=None,
        max_iteration_per_run=100_000,
        stuck_detection=False,
    )
    conversation.send_message(FIRST_MESSAGE)
    emit(
        {
            "kind": "ready",
            "python": sys.version.split()[0],
            "versions": {p: version(p) for p in ("openhands-sdk", "openhands-tools", "litellm")},
        }
    )

    runner: threading.Thread | None = None
    round_no = 0
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "run":
            runner = threading.Thread(target=conversation.run, daemon=True)
            runner.start()
        elif cmd == "arun":
            runner = threading.Thread(target=lambda: asyncio.run(conversation.arun()), daemon=True)
            runner.start()
        elif cmd in ("pause", "interrupt"):
            round_no += 1
            called_at_ms = time.time() * 1000
            t0 = time.perf_counter()
            if cmd == "pause":
                conversation.pause()
                pause_ms = (time.perf_counter() - t0) * 1000
            else:
                conversation.interrupt()
                # interrupt() schedules the cancel and returns: the pause is done when the state says so.
                while conversation.state.execution_status != ConversationExecutionStatus.PAUSED:
                    time.sleep(0.001)
                pause_ms = (time.perf_counter() - t0) * 1000
            run_stopped_ms = None
            if runner is not None:
                runner.join(timeout=60)
                if not runner.is_alive():
                    run_stopped_ms = (time.perf_counter() - t0) * 1000
            emit(
                {
                    "kind": "paused",
                    "round": round_no,
                    "called_at_ms": called_at_ms,
                    "pause_ms": pause_ms,
                    "status": str(conversation.state.execution_status.value),
                    "run_stopped_ms": run_stopped_ms,
                }
            )
        elif cmd == "quit":
            break
        else:
            emit({"kind": "error", "message": f"unknown command {cmd!r}"})
    conversation.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as err:  # the bench shows it, with the stderr tail
        emit({"kind": "error", "message": f"{type(err).__name__}: {err}"})
        raise
