"""The built-in tools' names, as the seed imports them (the worker on the workspace host runs them)."""
