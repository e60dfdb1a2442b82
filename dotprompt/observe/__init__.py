"""What runs leave behind: the run log, one run's record, OpenTelemetry spans, cost.

The modules of this package are its API; only its error is re-exported here."""

from ..errors import RunLogError

__all__ = ["RunLogError"]
