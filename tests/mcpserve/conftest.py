"""Fixtures of the MCP server's tests: the prompt folder, a library on it, and the SDK's own client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcpserve.project import make_folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path)
