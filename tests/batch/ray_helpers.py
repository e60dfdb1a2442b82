"""What the Ray tests hand to workers by reference (importable there: the tests put this folder on
the workers' PYTHONPATH): a model that kills its worker once, mid-run."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dotprompt.providers import define_model
from dotprompt.providers.base import ModelInfo
from dotprompt.types import Message, ModelResponse, Part


class KillOnce:
    """Answers {"double": 2n}; the first time it sees n == `victim`, it ends its process (no cleanup)."""

    info = ModelInfo()

    def __init__(self, marker: str, victim: int) -> None:
        self.name = "killer"
        self.marker = Path(marker)
        self.victim = victim

    async def generate(self, request, on_chunk=None):
        n = int(request.messages[-1].content[0].text.split()[-1])
        if n == self.victim and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(1)
        return ModelResponse(message=Message(role="model", content=[Part(text=json.dumps({"double": 2 * n}))]))


def install_killer(marker: str, victim: int) -> None:
    define_model(KillOnce(marker, victim))
