"""`dotprompt types`: a typed Python module for a prompt folder, and whether it is stale."""

__all__: list[str] = []  # the modules of this package are its API; nothing is re-exported here
