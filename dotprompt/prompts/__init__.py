__all__: list[str] = []  # the modules of this package are its API; nothing is re-exported here
