"""Where the local model's files live, and whether they are all there (no building, no terminal)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import settings

__all__ = ["MODEL_FILE", "TEMPLATE_FILE", "LocalPaths", "local_paths"]

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE_FILE = "smollm2-tools.jinja"


@dataclass(frozen=True)
class LocalPaths:
    """Where the local model's files live."""

    root: Path

    @property
    def server(self) -> Path:
        return self.root / "bin" / "llama-server"

    @property
    def server_stamp(self) -> Path:
        return self.root / "bin" / "llama-server.source"

    @property
    def model(self) -> Path:
        return self.root / "model" / MODEL_FILE

    @property
    def template(self) -> Path:
        return self.root / "model" / TEMPLATE_FILE

    @property
    def setup_log(self) -> Path:
        return self.root / "setup.log"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def missing(self) -> list[Path]:
        server_ok = self.server.is_file() and os.access(self.server, os.X_OK)
        return [p for p, ok in ((self.server, server_ok), (self.model, self.model.is_file()),
                                (self.template, self.template.is_file())) if not ok]

    def ready(self) -> bool:
        return not self.missing()


def local_paths(root: str | os.PathLike[str] | None = None) -> LocalPaths:
    return LocalPaths(Path(root) if root is not None else settings.local_dir())
