"""How this process reaches Temporal, the same way the TypeScript CLI does.

``TEMPORAL_ADDRESS`` (default ``localhost:7233``), ``TEMPORAL_NAMESPACE`` (default ``default``),
``TEMPORAL_API_KEY``, the TLS variables and envconfig TOML profiles (``TEMPORAL_PROFILE``), all through
Temporal's own loader; the data converter of :mod:`faheemcode.payloads`.

The seed's API is synchronous and called from several threads (``run()`` in one, ``pause()`` in
another), while Temporal's Python client is asyncio. So one event loop runs in a daemon thread of
its own, holds the clients, and every blocking call hands it a coroutine.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import os
import socket
import threading
from collections.abc import Coroutine, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from temporalio.client import Client
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime, TelemetryConfig

from .errors import ServerUnreachableError
from .payloads import data_converter

T = TypeVar("T")

#: How long connecting may take before the server counts as unreachable.
CONNECT_TIMEOUT_S = 5.0
DEFAULT_TASK_QUEUE = "faheem"


class _Loop:
    """An asyncio loop in a daemon thread, started on first use; safe to call from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="faheemcode-temporal", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def stop(self, timeout: float = 5.0) -> None:
        """Cancels what still runs on the loop, stops it and waits for its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None or not loop.is_running():
            return

        async def cancel_the_rest() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(cancel_the_rest(), loop).result(timeout)
        except Exception:  # noqa: BLE001 - shutting down: nothing left to tell
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Runs ``coro`` on the loop and blocks this thread until it is done."""
        if _on_loop_thread(self._loop):
            coro.close()
            raise RuntimeError("faheemcode's blocking calls cannot run on its own event loop thread")
        return self.submit(coro).result()


def _on_loop_thread(loop: asyncio.AbstractEventLoop | None) -> bool:
    try:
        return loop is not None and asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


LOOP = _Loop()


def connect_config(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The keyword arguments of ``Client.connect``: address, namespace, TLS and API key from envconfig."""
    env = dict(os.environ if env is None else env)
    config: dict[str, Any] = dict(ClientConfig.load_client_connect_config(override_env_vars=env))
    config.setdefault("target_host", env.get("TEMPORAL_ADDRESS") or "localhost:7233")
    config.setdefault("namespace", env.get("TEMPORAL_NAMESPACE") or "default")
    return config


_clients: dict[tuple[Any, ...], Client] = {}
_runtime: Runtime | None = None


def _client_runtime() -> Runtime:
    """The clients' own Temporal core runtime (its Tokio threads), released at exit (see _release)."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime(telemetry=TelemetryConfig())
    return _runtime


@atexit.register
def _release() -> None:
    # Temporal's core threads can call into Python while the interpreter is finalizing and crash it
    # (temporalio/sdk-python#300: a segfault in about 1 exit in 30 here). So before that: stop the
    # loop, then drop the clients and their runtime while Python is still whole.
    global _runtime
    LOOP.stop()
    _clients.clear()
    _runtime = None
    gc.collect()


async def _connect(env: Mapping[str, str] | None) -> Client:
    config = connect_config(env)
    converter = data_converter(env)  # a malformed encryption key fails here, with its own message
    key = (
        config["target_host"],
        config["namespace"],
        repr(sorted((k, str(v)) for k, v in config.items())),
        repr(converter.payload_codec and converter.payload_codec.key_id),  # type: ignore[attr-defined]
        repr(converter.external_storage),
    )
    cached = _clients.get(key)
    if cached is not None:
        return cached
    try:
        client = await asyncio.wait_for(
            Client.connect(**config, data_converter=converter, runtime=_client_runtime()),
            CONNECT_TIMEOUT_S,
        )
    except asyncio.TimeoutError as err:
        raise ServerUnreachableError(
            config["target_host"], f"no answer within {CONNECT_TIMEOUT_S:g} s"
        ) from err
    except RuntimeError as err:  # the core's "Failed client connect: …"
        raise ServerUnreachableError(config["target_host"], str(err)[:300]) from err
    _clients[key] = client
    return client


def connect_client(env: Mapping[str, str] | None = None) -> Client:
    """A Temporal client (on this package's loop) for ``env`` (default ``os.environ``).

    Raises:
        ServerUnreachableError: the server does not answer.
        EncryptionConfigError: a malformed FAHEEM_ENCRYPTION_KEY(S).
    """
    return LOOP.run(_connect(env))


def task_queue(env: Mapping[str, str] | None = None) -> str:
    """The task queue of workflows and model calls: ``FAHEEM_TASK_QUEUE``, default ``faheem``."""
    env = os.environ if env is None else env
    return env.get("FAHEEM_TASK_QUEUE") or DEFAULT_TASK_QUEUE


def tool_task_queue(env: Mapping[str, str] | None = None) -> str:
    """Tools run on the host that has the workspace; by default this host (as the TypeScript client says)."""
    env = os.environ if env is None else env
    return env.get("FAHEEM_TOOL_TASK_QUEUE") or f"{task_queue(env)}-tools@{socket.gethostname()}"
