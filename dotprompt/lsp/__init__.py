"""`dotprompt lsp`: the language server for `.prompt` and `*.test.yaml` files (the `[lsp]` extra).

Only `server.py` imports pygls; the other modules are the editor-neutral analysis it serves (the
folder, diagnostics with their ranges, completion, hover, definitions), tested without a client too.
Nothing here is imported by `import dotprompt` or by another command.
"""

__all__: list[str] = []
