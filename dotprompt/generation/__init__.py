"""The generate loop: option layers, turns and exits, middleware, streaming."""
