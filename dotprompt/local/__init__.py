"""The small local model (`local/<name>`): its catalog, setup, server and decoding defaults.

The modules of this package are its API; only its error is re-exported here."""

from ..errors import LocalSetupError

__all__ = ["LocalSetupError"]
