"""The ``terminal`` tool: commands run in the workspace on its host, by the worker."""

from typing import ClassVar


class TerminalTool:
    """Names the built-in ``terminal`` tool (``Tool(name=TerminalTool.name)``)."""

    name: ClassVar[str] = "terminal"


__all__ = ["TerminalTool"]
