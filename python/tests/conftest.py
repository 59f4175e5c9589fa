"""Shared pieces of the Python client's tests: the repository's root and the real stack for e2e."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
ROOT = PYTHON_DIR.parent
#: The key the test's worker and scripts hold (the harness's FAKE_KEY): it must never be in a history.
FAKE_KEY = "sk-faheem-test-secret-4f1c9a7e2b"


@dataclass
class Stack:
    """A dev server (shared or its own), a TypeScript worker and the scripted model, started by
    test/support/python-stack.ts through the e2e harness."""

    process: subprocess.Popen[str]
    env: dict[str, str]
    base_url: str
    namespace: str
    output: list[str] = field(default_factory=list)

    def release(self, gate: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"release {gate}\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()  # the helper stops the worker, model and its server
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_stack(name: str, *, encrypt: bool = False, gates: dict[int, str] | None = None) -> Stack:
    """Starts the stack and waits for its JSON line (the worker polls by then)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("the e2e tests need node (the worker is TypeScript)")
    args = [node, "--import", "tsx", "test/support/python-stack.ts", "--name", name]
    if encrypt:
        args.append("--encrypt")
    for step, gate in (gates or {}).items():
        args += ["--gate", f"{step}:{gate}"]
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "FORCE_COLOR": "0"},
    )
    assert proc.stdout is not None
    output: list[str] = []
    # The first JSON line says it is ready; everything else is the helper's log (kept for failures).
    ready: dict[str, object] | None = None
    timer = threading.Timer(180, proc.kill)  # a deadline for a loaded machine, not a timing
    timer.start()
    try:
        for line in proc.stdout:
            output.append(line)
            if line.startswith("{"):
                ready = json.loads(line)
                break
    finally:
        timer.cancel()
    if ready is None:
        proc.wait()
        pytest.fail("the stack did not start:\n" + "".join(output))
    # Keep draining its output so that it never blocks on a full pipe.
    threading.Thread(target=lambda: output.extend(proc.stdout or []), daemon=True).start()
    env = {str(k): str(v) for k, v in dict(ready["env"]).items()}  # type: ignore[call-overload]
    return Stack(proc, env, str(ready["baseUrl"]), str(ready["namespace"]), output)


@pytest.fixture
def stack_factory() -> Iterator[list[Stack]]:
    """Stacks started in a test, stopped after it."""
    started: list[Stack] = []
    yield started
    for s in started:
        s.stop()
