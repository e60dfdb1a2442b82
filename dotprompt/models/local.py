"""The local model (llama.cpp's llama-server + SmolLM2-135M-Instruct): placeholder until setup lands."""

from __future__ import annotations


def default_local_model() -> str | None:
    """`local/smollm2` when the local model has been set up, else None."""
    return None
