"""``LLM``: which model the agent uses. The worker calls it; the key never leaves this process."""

from __future__ import annotations

import sys
import threading
import warnings
import weakref
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, StringConstraints

from .state import ConversationState, Metrics


class _Driven(Protocol):
    """A conversation an ``LLM`` drives, as the LLM sees it: its state, for the metrics. (A protocol,
    so that this module does not import the conversation's, which imports this one.)"""

    @property
    def state(self) -> ConversationState: ...


class WorkerKeyWarning(UserWarning):
    """An ``api_key`` was given to ``LLM``: it stays here, and the worker's own key calls the model."""


_warned = threading.Event()


def _warn_key_stays_here() -> None:
    # The worker publishes nothing about its key (not even a fingerprint) that could be compared
    # without putting it into Temporal, so the difference is said once per process, not checked.
    if _warned.is_set():
        return
    _warned.set()
    warnings.warn(
        WorkerKeyWarning(
            "faheemcode: the api_key given to LLM stays in this process and is never sent to Temporal; "
            "the model is called by the worker with its own key (LLM_API_KEY, or the provider's key "
            "variable, where `faheem worker` runs). If that key differs from this one, the worker's is used."
        ),
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """The stack level of the first frame outside this package and pydantic (the user's ``LLM(...)``)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in (
        "faheemcode",
        "pydantic",
    ):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    return level


# A model of a fallback chain: one name, no commas (the worker splits LLM_MODEL's chain on them).
_ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^,]+$")]


class LLM(BaseModel):
    """The model an agent uses: its name (``openai/gpt-4o``, ``anthropic/…``; default the worker's
    ``LLM_MODEL``), endpoint and temperature.

    ``api_key`` is accepted, as the seed passes one, but never sent: conversation inputs are kept in
    Temporal's history, so the worker reads the key from its own environment (see
    :class:`WorkerKeyWarning`). ``fallbacks`` names models to move to, in order, when the model is
    unavailable (429, 5xx, 529, unreachable), e.g. ``["anthropic/claude-sonnet-4-6"]``; each uses its
    own provider's endpoint and key on the worker. ``metrics`` reads the cost of the conversations
    this LLM drives from their workflows.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    usage_id: str = "agent"
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    temperature: float | None = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    wire_api: Literal["responses", "chat"] | None = None
    fallbacks: list[_ModelName] | None = Field(default=None, max_length=7)

    _conversations: weakref.WeakSet[_Driven] = PrivateAttr(default_factory=weakref.WeakSet)

    def model_post_init(self, context: Any, /) -> None:
        if self.api_key is not None:
            _warn_key_stays_here()

    def spec(self) -> dict[str, Any]:
        """The model as the conversation keeps it (the TypeScript ``LLMSpec``): never the key."""
        out: dict[str, Any] = {"usageId": self.usage_id}
        if self.model:
            out["model"] = self.model
        if self.base_url:
            out["baseUrl"] = self.base_url
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.reasoning_effort:
            out["reasoningEffort"] = self.reasoning_effort
        if self.wire_api:
            out["wireApi"] = self.wire_api
        if self.fallbacks:
            out["fallbacks"] = list(self.fallbacks)
        return out

    def _bind(self, conversation: _Driven) -> None:
        self._conversations.add(conversation)

    @property
    def metrics(self) -> Metrics:
        """Cost, tokens and model calls of the conversations this LLM drives in this process, read
        from their workflows now (``llm.metrics.accumulated_cost``)."""
        total = Metrics()
        for conversation in list(self._conversations):
            total = total + conversation.state.metrics
        return total
