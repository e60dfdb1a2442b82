"""The ids a provider's batch API returns (job, file and batch names), checked before any use.

A job id becomes a file name beside the output (`<job>.ids`, `<job>.results.jsonl`) and a URL path
(`/batches/<job>`, `/files/<file>/content`) that is sent the API key. An id is the provider's word,
so it is held to what the three providers hand out (`batch_abc`, `msgbatch_01H...`, `file-x1`, a
Gemini batch name): letters, digits, `_`, `-` and `.`, starting with a letter or digit. That rules
out `/`, `\\`, `..`, `%`, `?`, `#`, whitespace and control characters, so an id can neither leave
the job folder nor change the URL it is put in.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ...errors import BatchJobError

__all__ = ["FROM_PROVIDER", "MAX_ID_LENGTH", "checked_id"]

MAX_ID_LENGTH: Final = 200  # real ids are under 64 characters; a file name may hold 255 bytes
_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*", re.ASCII)
# What to check when the provider's own reply holds a bad id.
FROM_PROVIDER: Final = ("check that the provider's base URL points at the provider itself, not at a server or proxy "
                        "that rewrites its replies")


def checked_id(value: Any, field: str, source: str, then: str) -> str:
    """`value` when it is a usable id; else a BatchJobError naming `field`, where it came from and what to do.

    `source` says where the value was read (`the reply of POST /batches`, `the state file X`); `then`
    what it means for the job and what to do about it."""
    if isinstance(value, str) and len(value) <= MAX_ID_LENGTH and _ID.fullmatch(value):
        return value
    shown = repr(value) if not isinstance(value, str) or len(value) <= 80 else repr(value[:77]) + "..."
    raise BatchJobError(f"{source}: `{field}` is {shown}, which is not a batch id (letters, digits, '_', '-' and '.', "
                        f"at most {MAX_ID_LENGTH} characters). It would be a file name and part of a URL, so it was not "
                        f"used: {then}")
