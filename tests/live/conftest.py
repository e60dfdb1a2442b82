"""The live suite: the real llama-server and SmolLM2-135M, set up by `dotprompt local setup`.

Without the setup these tests skip, unless DOTPROMPT_REQUIRE_LIVE is set (CI sets it): then a
missing setup fails them, so a broken setup step cannot pass as "skipped".
"""

from __future__ import annotations

import os

import pytest

from dotprompt.local.model import LocalModel, local_paths, stop_all


def live_required() -> bool:
    return os.environ.get("DOTPROMPT_REQUIRE_LIVE", "") not in ("", "0")


@pytest.fixture(scope="session")
def local_model() -> LocalModel:
    """The local model on this process's shared server, started once for the session."""
    paths = local_paths()
    if not paths.ready():
        reason = (f"the local model is not set up in {paths.root} (missing {', '.join(p.name for p in paths.missing())}): "
                  "run `dotprompt local setup`")
        if live_required():
            pytest.fail(f"DOTPROMPT_REQUIRE_LIVE is set and {reason}", pytrace=False)
        pytest.skip(reason)
    model = LocalModel()
    model.connect()  # start the server now, so no single test pays for it
    yield model
    stop_all()
