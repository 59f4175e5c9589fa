"""The client's loop thread and Temporal runtime are released before the interpreter finalizes
(temporalio/sdk-python#300: the core's threads calling into a finalizing interpreter crashed about
1 exit in 30 here; 0 in 210 with the release)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from faheemcode import connection


def test_the_release_stops_the_loop_and_drops_the_clients() -> None:
    loop = connection.LOOP.loop()
    thread = connection.LOOP._thread
    assert thread is not None and thread.is_alive()
    pending = connection.LOOP.submit(asyncio.sleep(3600))  # a wait still under way at exit
    connection._client_runtime()
    connection._release()
    assert not thread.is_alive() and loop.is_closed()
    assert pending.cancelled()
    assert connection._runtime is None and connection._clients == {}
    # The next call starts a new loop.
    assert connection.LOOP.run(asyncio.sleep(0, result="again")) == "again"


def test_the_release_runs_at_exit() -> None:
    script = (
        "import atexit, faheemcode.connection as c\n"
        "c.LOOP.loop(); thread = c.LOOP._thread\n"
        "atexit._run_exitfuncs()  # what the interpreter runs before it finalizes\n"
        "print('loop thread alive:', thread.is_alive())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "loop thread alive: False"
