"""Live tests against the real local model (pytest -m live)."""
