"""The generate loop: option layers, turns and exits, middleware, streaming."""

__all__: list[str] = []  # the modules of this package are its API; nothing is re-exported here
