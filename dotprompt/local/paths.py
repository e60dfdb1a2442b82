"""Where the local model's files live, and whether they are all there (no building, no terminal)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import settings
from .catalog import LocalModelSpec, default_spec, spec_for

__all__ = ["LocalPaths", "local_paths"]


@dataclass(frozen=True)
class LocalPaths:
    """Where the local model's files live: one server for every model, one GGUF and template per model."""

    root: Path
    spec: LocalModelSpec = field(default_factory=default_spec)

    @property
    def server(self) -> Path:
        return self.root / "bin" / "llama-server"

    @property
    def server_stamp(self) -> Path:
        return self.root / "bin" / "llama-server.source"

    @property
    def model(self) -> Path:
        return self.root / "model" / self.spec.file

    @property
    def template(self) -> Path:
        return self.root / "model" / self.spec.template

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


def local_paths(root: str | os.PathLike[str] | None = None, model: str | None = None) -> LocalPaths:
    """The files of `model` (`local/<name>`; default: the default local model) under `root` (default: the cache)."""
    spec = spec_for(model) if model else default_spec()
    return LocalPaths(Path(root) if root is not None else settings.local_dir(), spec)
