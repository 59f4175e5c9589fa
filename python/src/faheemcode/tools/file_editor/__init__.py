"""The ``file_editor`` tool: view, create and edit files in the workspace, run by the worker."""

from typing import ClassVar


class FileEditorTool:
    """Names the built-in ``file_editor`` tool (``Tool(name=FileEditorTool.name)``)."""

    name: ClassVar[str] = "file_editor"


__all__ = ["FileEditorTool"]
