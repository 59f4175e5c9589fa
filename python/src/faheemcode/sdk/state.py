"""What the conversation workflow answers, checked with pydantic: its state, metrics and events.

The workflow is written in TypeScript and answers in camelCase JSON; these models read it into
snake_case attributes and keep fields they do not name (a newer worker may add some).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import AliasGenerator, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

_CAMEL = ConfigDict(
    alias_generator=AliasGenerator(validation_alias=to_camel),
    populate_by_name=True,
    extra="allow",
    frozen=True,
)


class ExecutionStatus(str, Enum):
    """A conversation's status, as the CONTRACT names them. Prints as its value (``paused``)."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    WAITING_FOR_CONFIRMATION = "waiting_for_confirmation"
    FINISHED = "finished"
    ERROR = "error"
    STUCK = "stuck"

    # Python 3.11 formats a str-mixin enum as "ExecutionStatus.PAUSED"; the seed prints the value.
    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


#: Statuses in which a run has stopped (``run()`` returns).
STOPPED = frozenset(s for s in ExecutionStatus if s is not ExecutionStatus.RUNNING)


class Metrics(BaseModel):
    """Cost (USD, the whole tree's with sub-agents), tokens and model calls so far."""

    model_config = _CAMEL

    accumulated_cost: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    llm_calls: int = 0

    def __add__(self, other: Metrics) -> Metrics:
        return Metrics(
            accumulated_cost=self.accumulated_cost + other.accumulated_cost,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            llm_calls=self.llm_calls + other.llm_calls,
        )


class ConversationState(BaseModel):
    """The ``state`` query's answer (what ``faheem status --json`` prints), read once."""

    model_config = _CAMEL

    id: str
    status: ExecutionStatus
    iterations: int = 0
    run_number: int = 0
    events: int = 0
    pending_messages: int = 0
    metrics: Metrics = Metrics()
    last_error: str | None = None
    workspace: str = ""
    model: str = ""
    closed: bool = False
    final_message: str | None = None
    #: With an output schema: the final answer's JSON value, checked against it (None until one matched).
    output: Any = None
    confirmation_policy: str | None = None
    pending_actions: list[dict[str, Any]] = []
    children: list[dict[str, Any]] = []

    @property
    def execution_status(self) -> ExecutionStatus:
        """The status, under the seed's name."""
        return self.status


class Event(BaseModel):
    """One event of the conversation's log. Fields beyond these depend on ``kind`` (``message``:
    ``text``; ``action``: ``tool``, ``toolCallId``, ``arguments``; ``observation``: ``content``, …)
    and are attributes too, under the workflow's own (camelCase) names."""

    model_config = ConfigDict(extra="allow", frozen=True)

    index: int
    timestamp: str
    kind: str
    source: str | None = None

    def get(self, name: str, default: Any = None) -> Any:
        """A field by its name in the workflow's JSON (e.g. ``toolCallId``), or ``default``."""
        if name in type(self).model_fields:
            return getattr(self, name)
        return (self.model_extra or {}).get(name, default)
