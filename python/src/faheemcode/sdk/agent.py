"""``Agent``: a model and the tools it may call (named; the worker on the workspace host runs them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .llm import LLM
from .tool import Tool

DEFAULT_TOOLS = ("terminal", "file_editor")


class Agent(BaseModel):
    """What the agent is: its model, the tools it may call and, optionally, its own system prompt.

    Tools are named (``Tool(name=TerminalTool.name)``, or a plain name); ``think`` and ``finish``
    are always added, as the model needs a way to reason and to stop.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    llm: LLM
    tools: list[Tool] = Field(default_factory=lambda: [Tool(name=n) for n in DEFAULT_TOOLS])
    system_prompt: str | None = None
    host_tools: bool = False

    @field_validator("tools", mode="before")
    @classmethod
    def _named(cls, value: Sequence[Any]) -> list[Any]:
        # A plain name, a Tool, or a tool class with a `name` (TerminalTool) are all fine.
        return [
            Tool(name=t)
            if isinstance(t, str)
            else Tool(name=t.name)
            if not isinstance(t, (Tool, dict))
            else t
            for t in value
        ]

    def spec(self) -> dict[str, Any]:
        """The agent as the conversation keeps it (the TypeScript ``AgentSpec``)."""
        names = list(dict.fromkeys([t.name for t in self.tools] + ["think", "finish"]))
        out: dict[str, Any] = {"llm": self.llm.spec(), "tools": names}
        if self.host_tools:
            out["hostTools"] = True
        if self.system_prompt:
            out["systemPrompt"] = self.system_prompt
        return out
