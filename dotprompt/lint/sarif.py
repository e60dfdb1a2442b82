"""`dotprompt check --format sarif`: the diagnostics as one SARIF 2.1.0 log, for GitHub code scanning.

One run, one rule per diagnostic code (lint/codes.py: its description, and its level as the rule's
default: an error fails the check, a warning does not), one result per diagnostic, its `ruleId` its
code and its `level` its level. Locations are URIs relative to the folder the check ran from (`%SRCROOT%`), which
is the repository root in CI, so code scanning can place each result on its line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .check import Diagnostic
from .codes import CODES

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "to_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://google.github.io/dotprompt/"


def to_sarif(diagnostics: Sequence[Diagnostic], *, version: str, base: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The SARIF log of `diagnostics`; paths are made relative to `base` (default: the working folder)."""
    root = Path(base if base is not None else Path.cwd()).resolve()
    rules = [{"id": name, "shortDescription": {"text": code.summary},
              "defaultConfiguration": {"level": code.level}} for name, code in CODES.items()]
    index = {name: number for number, name in enumerate(CODES)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": "dotprompt", "version": version, "informationUri": INFORMATION_URI,
                                "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "results": [_result(d, root, index[d.code]) for d in diagnostics],
        }],
    }


def _result(diagnostic: Diagnostic, root: Path, rule_index: int) -> dict[str, Any]:
    region: dict[str, int] = {}
    if diagnostic.line:
        region["startLine"] = diagnostic.line
        if diagnostic.column:
            region["startColumn"] = diagnostic.column
    uri = _uri(diagnostic.path, root)
    artifact = {"uri": uri} if uri.startswith("file:") else {"uri": uri, "uriBaseId": "%SRCROOT%"}
    location: dict[str, Any] = {"artifactLocation": artifact}
    if region:
        location["region"] = region
    return {"ruleId": diagnostic.code, "ruleIndex": rule_index, "level": diagnostic.level,
            "message": {"text": diagnostic.message}, "locations": [{"physicalLocation": location}]}


def _uri(path: str, root: Path) -> str:
    """A relative URI when `path` is under `root` (code scanning needs that), else an absolute file URI."""
    resolved = Path(path).resolve()
    try:
        return quote(resolved.relative_to(root).as_posix())
    except ValueError:
        return resolved.as_uri()
