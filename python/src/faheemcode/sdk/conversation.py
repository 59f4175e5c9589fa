"""``Conversation``: a handle on one conversation workflow, with the seed's blocking API.

Every call goes through Temporal to the ``conversation`` workflow the TypeScript worker runs (the
same signals, queries and updates as src/conversation/workflow/messages.ts), so any process, in either
language, can attach to the same conversation. Calls block the calling thread; ``pause()`` may be
called from any thread while another is inside ``run()``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.exceptions import TemporalError
from temporalio.service import RPCError, RPCStatusCode

from ..codec import is_encrypted
from ..connection import LOOP, _connect, task_queue, tool_task_queue
from ..errors import (
    ConversationClosedError,
    ConversationNotFoundError,
    DecryptionError,
    FaheemError,
    InvalidRequestError,
    PayloadUnavailableError,
)
from ..images import ImageInput, store_images
from .agent import DEFAULT_TOOLS, Agent
from .llm import LLM
from .state import STOPPED, ConversationState, Event, ExecutionStatus, Metrics

T = TypeVar("T")

#: The TypeScript side's limits and defaults (src/core/types/workflow.ts,
#: src/conversation/conversation-id.ts).
MAX_MESSAGE_CHARS = 100_000
DEFAULT_MAX_ITERATIONS = 500
DEFAULT_IDLE_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000
CONVERSATION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
MAX_EXISTING_ID = 255
DEFAULT_MODEL_TEXT = "the worker's LLM_MODEL"
_EVENTS_PAGE = 10_000
STATUS_KEY = SearchAttributeKey.for_keyword("ConversationStatus")
MODEL_KEY = SearchAttributeKey.for_keyword("ConversationModel")

ConfirmationPolicy = Literal["never", "always", "risky"]


def check_message(text: object) -> str:
    """``text`` when the conversation would accept it as a user message; else InvalidRequestError."""
    if not isinstance(text, str) or text.strip() == "":
        raise InvalidRequestError("message not sent: the message is empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidRequestError(
            f"message not sent: the message is longer than {MAX_MESSAGE_CHARS} characters (it has {len(text)})"
        )
    return text


def check_conversation_id(conversation_id: object) -> str:
    """A new conversation's id as the workflow accepts it; else InvalidRequestError."""
    if (
        not isinstance(conversation_id, str)
        or ".." in conversation_id
        or not CONVERSATION_ID.match(conversation_id)
    ):
        raise InvalidRequestError(
            f"conversation id {conversation_id!r} is not valid: ids are 1–128 characters of letters, digits, "
            "'.', '_', ':' and '-', start with a letter or digit, and never contain '..'"
        )
    return conversation_id


def check_existing_conversation_id(conversation_id: object) -> str:
    """An id to attach to: a new conversation's id, a sub-agent's (``<id>.sub-<n>``) or an older id
    (up to 255 characters), never a path (``/``, ``\\``, a leading ``.``, ``..``) nor control
    characters; else InvalidRequestError. The TypeScript side's rule for existing ids."""
    if (
        isinstance(conversation_id, str)
        and CONVERSATION_ID.match(conversation_id)
        and ".." not in conversation_id
    ):
        return conversation_id
    if (
        not isinstance(conversation_id, str)
        or not conversation_id
        or len(conversation_id) > MAX_EXISTING_ID
        or ".." in conversation_id
        or conversation_id.startswith(".")
        or any(c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F for c in conversation_id)
    ):
        return check_conversation_id(conversation_id)  # raises, with the rule
    return conversation_id


def conversation_input(
    agent: Agent,
    workspace: str,
    *,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    confirmation_policy: ConfirmationPolicy = "never",
    max_budget_per_run: float | None = None,
    output_schema: Mapping[str, Any] | type[BaseModel] | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The workflow's input (the TypeScript ``ConversationInput``), as ``Conversation.create`` builds it."""
    if confirmation_policy not in ("never", "always", "risky"):
        raise InvalidRequestError(
            f"confirmation_policy must be never, always or risky, not {confirmation_policy!r}"
        )
    options: dict[str, Any] = {
        "workspace": os.path.abspath(workspace),
        "agent": agent.spec(),
        "toolTaskQueue": tool_task_queue(env),
        "maxIterations": max_iterations,
        "confirmationPolicy": confirmation_policy,
        "idleTimeoutMs": DEFAULT_IDLE_TIMEOUT_MS,
    }
    if max_budget_per_run is not None:
        options["maxBudgetPerRunUsd"] = max_budget_per_run
    if output_schema is not None:
        options["outputSchema"] = _output_schema(output_schema)
    return {"options": options}


MAX_OUTPUT_SCHEMA_BYTES = 64 * 1024


def _output_schema(schema: Mapping[str, Any] | type[BaseModel]) -> dict[str, Any]:
    """A JSON Schema from a mapping or a pydantic model class (its ``model_json_schema()``); the worker
    compiles and checks it again, and ends the run in ``error`` saying why when it is not one."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        schema = schema.model_json_schema()
    if not isinstance(schema, Mapping):
        raise InvalidRequestError("output_schema must be a JSON Schema (a mapping) or a pydantic model class")
    text = json.dumps(dict(schema))
    if len(text.encode()) > MAX_OUTPUT_SCHEMA_BYTES:
        raise InvalidRequestError(f"the output schema is over 64 KiB ({len(text.encode())} bytes)")
    parsed: dict[str, Any] = json.loads(text)
    return parsed


class Conversation:
    """A conversation with an agent: one durable Temporal workflow, run by a faheemcode worker.

    ``Conversation(agent, workspace=...)`` starts it (waiting in ``idle``);
    :meth:`Conversation.attach` gives the same object for an existing one. Errors are
    :class:`faheemcode.FaheemError`: ConversationNotFoundError, ConversationClosedError,
    InvalidRequestError (the conversation refused, and says why).
    """

    def __init__(
        self,
        agent: Agent,
        workspace: str | os.PathLike[str] | None = None,
        *,
        conversation_id: str | None = None,
        max_iteration_per_run: int = DEFAULT_MAX_ITERATIONS,
        confirmation_policy: ConfirmationPolicy = "never",
        max_budget_per_run: float | None = None,
        output_schema: Mapping[str, Any] | type[BaseModel] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.agent = agent
        self._env = env
        self.id = (
            check_conversation_id(conversation_id)
            if conversation_id is not None
            else f"conv-{str(uuid.uuid4())[:13]}"
        )
        args = conversation_input(
            agent,
            os.fspath(workspace) if workspace is not None else os.getcwd(),
            max_iterations=max_iteration_per_run,
            confirmation_policy=confirmation_policy,
            max_budget_per_run=max_budget_per_run,
            output_schema=output_schema,
            env=env,
        )
        self.workspace: str = args["options"]["workspace"]
        self._client: Client = LOOP.run(_connect(env))
        self._handle: WorkflowHandle[Any, Any] = LOOP.run(self._start(args))
        agent.llm._bind(self)

    async def _start(self, args: dict[str, Any]) -> WorkflowHandle[Any, Any]:
        spec = self.agent.spec()
        model = spec["llm"].get("model")
        details = "\n\n".join(
            [
                f"**Model:** {model or DEFAULT_MODEL_TEXT}",
                f"**Workspace:** `{self.workspace}`",
                f"**Tools:** {', '.join(spec['tools'])}",
                f"**Max iterations per run:** {args['options']['maxIterations']} · "
                f"**Confirmation:** {args['options']['confirmationPolicy']}",
            ]
        )
        try:
            return await self._client.start_workflow(
                "conversation",
                args,
                id=self.id,
                task_queue=task_queue(self._env),
                memo={"workspace": self.workspace},
                # Visible (faheem list, faheem status without a worker) before any worker picked it up.
                search_attributes=TypedSearchAttributes(
                    [
                        SearchAttributePair(STATUS_KEY, "idle"),
                        SearchAttributePair(MODEL_KEY, model or "default"),
                    ]
                ),
                static_summary=f"Conversation in {self.workspace}",
                static_details=details,
            )
        except RPCError as err:
            if err.status == RPCStatusCode.ALREADY_EXISTS:
                raise InvalidRequestError(
                    f"a conversation {self.id} exists already; attach to it with Conversation.attach({self.id!r})"
                ) from err
            raise

    @classmethod
    def attach(cls, conversation_id: str, *, env: Mapping[str, str] | None = None) -> Conversation:
        """The same object for an existing conversation, from any process.

        Raises:
            ConversationNotFoundError: no such conversation.
            DecryptionError: it is encrypted and this process has no (or the wrong) key.
        """
        check_existing_conversation_id(conversation_id)
        self = cls.__new__(cls)
        self.id = conversation_id
        self._env = env
        self._client = LOOP.run(_connect(env))
        self._handle = self._client.get_workflow_handle(conversation_id)
        LOOP.run(self._check_readable())
        state = self.state
        self.workspace = state.workspace
        setup = self._call(lambda: self._handle.query("setup"))
        tools = [t["name"] for t in (setup or {}).get("tools", []) if isinstance(t, dict) and t.get("name")]
        llm = LLM(model=state.model or None)
        self.agent = Agent(llm=llm, tools=tools or list(DEFAULT_TOOLS))
        llm._bind(self)
        return self

    async def _check_readable(self) -> None:
        try:
            described = await self._handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise ConversationNotFoundError(self.id) from err
            raise
        # An encrypted conversation: a process without the key stops here with a clear error,
        # before it sends a query, signal or update the worker (or this process) could not read.
        summary = described.raw_description.execution_config.user_metadata.summary
        try:
            await described.static_summary()
        except Exception as err:  # noqa: BLE001 - the SDK's error for an unknown encoding varies
            if is_encrypted(summary) and self._client.data_converter.payload_codec is None:
                raise DecryptionError(
                    "this conversation is encrypted and this process has no key: set FAHEEM_ENCRYPTION_KEY "
                    "or FAHEEM_ENCRYPTION_KEYS (the key the conversation was written with)"
                ) from err
            raise

    # --- the seed's API ---------------------------------------------------------------------

    def send_message(self, text: str, images: Sequence[ImageInput] | None = None) -> int:
        """Adds a user message and answers with its event index. While running it is read before the
        next model call; while paused or idle it waits for ``run()``.

        ``images``: file paths or bytes (PNG, JPEG, GIF or WebP, at most 5 MB each and 10 a message).
        Their bytes go to the object store first; the conversation keeps only their references."""
        check_message(text)
        refs = store_images(images, self._env)
        args: list[Any] = [text, refs] if refs else [text]
        answer = self._call(lambda: self._handle.execute_update("addMessage", args=args))
        return int(answer["index"])

    def run(self) -> None:
        """Runs (or resumes) the agent and blocks until the run stops: finished, paused, error, stuck
        or waiting for confirmation. Call it from a thread to ``pause()`` meanwhile."""
        answer = self._call(lambda: self._handle.execute_update("run"))
        self.wait_until_stopped(after_run=int(answer["runNumber"]))

    def pause(self, *, now: bool = False, wait: bool = False) -> ExecutionStatus | None:
        """Pauses: no model call or tool run starts after this, and the model call in flight is
        cancelled; with ``now`` the running command is interrupted too. Safe from any thread: a
        ``run()`` in another thread returns once the pause lands. A signal, so it reaches the
        conversation even while no worker runs; with ``wait`` it returns once the conversation has
        handled it, with the status after it (``paused``; one that was not running stays as it
        was), which needs a worker to answer."""
        request = {"now": True} if now else {}
        if wait:
            answer = self._call(lambda: self._handle.execute_update("pauseApplied", request))
            return ExecutionStatus(answer["status"])
        self._call(lambda: self._handle.signal("pause", request))
        return None

    @property
    def state(self) -> ConversationState:
        """The state now, read from the workflow (``state.execution_status``, ``state.metrics``, …)."""
        raw = self._call(lambda: self._handle.query("state"))
        return ConversationState.model_validate(raw)

    @property
    def metrics(self) -> Metrics:
        """Cost, tokens and model calls so far."""
        return self.state.metrics

    def close(self) -> None:
        """Ends the conversation workflow cleanly (its history and events stay readable). Closing a
        closed conversation does nothing."""
        try:
            self._call(lambda: self._handle.signal("close"))
        except ConversationClosedError:
            pass

    def approve(self) -> int:
        """Runs the actions waiting for confirmation; answers how many."""
        return int(self._call(lambda: self._handle.execute_update("approve"))["approved"])

    def reject(self, reason: str = "") -> int:
        """Refuses the actions waiting for confirmation; the model sees ``reason`` and goes on."""
        return int(self._call(lambda: self._handle.execute_update("reject", reason))["rejected"])

    def events(self, from_index: int = 0, *, follow: bool = False) -> Iterator[Event]:
        """The event log from ``from_index``, in order. With ``follow`` it then waits for new events
        and yields them as they are recorded, until the conversation closes (or you stop iterating)."""
        next_index = from_index
        while True:
            for event in self._call(partial(self._read_events, next_index)):
                next_index = event.index + 1
                yield event
            if not follow:
                return
            news = self._call(partial(self._next_change, {"afterEvents": next_index}))
            if news is None:
                # Closed, or a workflow that cannot tell of news: read what is left, then stop.
                yield from self._call(partial(self._read_events, next_index))
                return

    def wait_until_stopped(self, *, after_run: int | None = None) -> ConversationState:
        """Blocks until the conversation is not running (or, with ``after_run``, a later run began)."""

        def done(s: ConversationState) -> bool:
            return s.status in STOPPED or (after_run is not None and s.run_number > after_run)

        request: dict[str, Any] = {"whenStopped": True}
        if after_run is not None:
            request["afterRun"] = after_run
        while True:
            answer = self._call(lambda: self._next_change(request))
            s = self.state
            if done(s):
                return s
            if answer is None:  # a workflow that cannot wait (closed, older): poll
                if s.closed:
                    return s
            # Answered because the run is ending (continue-as-new): ask the next run.
            LOOP.run(asyncio.sleep(0.1))

    # --- plumbing ---------------------------------------------------------------------------

    async def _next_change(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Waits on the workflow (the ``waitForChange`` update) for news; None when it cannot be asked."""
        try:
            return await self._handle.execute_update("waitForChange", request)  # type: ignore[no-any-return]
        except WorkflowUpdateFailedError:
            return None
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return None
            raise

    async def _query_events(self, handle: WorkflowHandle[Any, Any], start: int, limit: int) -> list[Event]:
        page = await handle.query("events", args=[start, limit])
        return [Event.model_validate(e) for e in page]

    async def _held_events(
        self, handle: WorkflowHandle[Any, Any], start: int, end: int | None = None
    ) -> list[Event]:
        out: list[Event] = []
        nxt = start
        while True:
            limit = _EVENTS_PAGE if end is None else end - nxt
            if limit <= 0:
                return out
            page = await self._query_events(handle, nxt, limit)
            within = page if end is None else [e for e in page if e.index < end]
            if not within:
                return out
            out.extend(within)
            nxt = within[-1].index + 1
            if len(within) < len(page):
                return out

    async def _read_events(self, start: int) -> list[Event]:
        """Every event from ``start``, with no gaps: what the current run holds, and the condensed
        events it no longer holds from the earlier run that recorded them (as the CLI reads them)."""
        held = await self._held_events(self._handle, start)
        out: list[Event] = []
        nxt = start
        runs: list[dict[str, Any]] | None = None
        for e in held:
            if e.index > nxt:
                if runs is None:
                    runs = list(await self._handle.query("eventRuns"))
                out.extend(await self._from_earlier_runs(runs, nxt, e.index))
            out.append(e)
            nxt = e.index + 1
        return out

    async def _from_earlier_runs(self, runs: list[dict[str, Any]], start: int, end: int) -> list[Event]:
        out: list[Event] = []
        i = start
        while i < end:
            k = max((j for j, r in enumerate(runs) if int(r["from"]) <= i), default=-1)
            if k < 0:
                raise FaheemError(f"event {i} of {self.id} is in no run's record")
            stop = min(end, int(runs[k + 1]["from"]) if k + 1 < len(runs) else end)
            handle = self._client.get_workflow_handle(self.id, run_id=runs[k]["runId"])
            got = await self._held_events(handle, i, stop)
            if not got or got[0].index != i:
                raise FaheemError(
                    f"events {i}–{stop - 1} of {self.id} could not be read from run {runs[k]['runId']}"
                )
            out.extend(got)
            i = got[-1].index + 1
        return out

    def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Runs a call on the client's loop and turns Temporal's errors into ours."""

        async def call() -> T:
            try:
                return await make()
            except WorkflowUpdateFailedError as err:
                cause = err.cause
                raise InvalidRequestError(getattr(cause, "message", None) or str(cause or err)) from err
            except RPCError as err:
                if err.status == RPCStatusCode.NOT_FOUND:
                    await self._raise_gone(err)
                raise
            except PayloadUnavailableError as err:
                raise PayloadUnavailableError(f"conversation {self.id}: {err.message}") from err
            except FaheemError:
                raise
            except (TemporalError, ValueError, RuntimeError) as err:
                self._explain(err)
                raise

        return LOOP.run(call())

    async def _raise_gone(self, err: RPCError) -> None:
        # The server says the same for a workflow that has completed and one that never was.
        try:
            described = await self._handle.describe()
        except RPCError:
            raise ConversationNotFoundError(self.id) from err
        if described.status is not None and described.status.name != "RUNNING":
            raise ConversationClosedError(self.id) from err
        raise ConversationNotFoundError(self.id) from err

    def _explain(self, err: BaseException) -> None:
        text = str(err)
        if "No driver found with name" in text:
            raise PayloadUnavailableError(
                f"conversation {self.id} holds a payload stored outside Temporal by a storage driver this "
                f"process does not have ({text}); read it where the worker's payload store is reachable, "
                "with the same FAHEEM_PAYLOAD_DIR (this client reads the local-files store only)"
            ) from err
        if "binary/encrypted" in text:
            raise DecryptionError(
                f"conversation {self.id} is encrypted and this process has no key: set FAHEEM_ENCRYPTION_KEY "
                "or FAHEEM_ENCRYPTION_KEYS (the key the conversation was written with)"
            ) from err

    def __repr__(self) -> str:
        return f"Conversation(id={self.id!r}, workspace={getattr(self, 'workspace', None)!r})"


__all__ = ["Conversation", "ExecutionStatus", "check_message"]
