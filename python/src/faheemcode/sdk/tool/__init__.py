"""``Tool``: a tool the agent may call, named (its code runs in the worker, never here)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, field_validator

#: What the worker accepts as a tool name (the TypeScript side's TOOL_NAME).
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Tool(BaseModel):
    """A tool for :class:`faheemcode.sdk.Agent`, by name: a built-in (``TerminalTool.name``), one
    given to the worker with ``createWorker({ tools })`` or ``faheem worker --tools``, or an MCP tool."""

    model_config = ConfigDict(frozen=True)

    name: str

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not TOOL_NAME.match(value):
            raise ValueError(
                f'"{value}" is not a tool name (letters, digits, _ and -, at most 64 characters)'
            )
        return value


__all__ = ["Tool", "TOOL_NAME"]
