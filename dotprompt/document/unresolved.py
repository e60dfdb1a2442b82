"""Names a prompt file uses that the application may define in code: schemas, helpers, tools.

One rule for the three kinds. A name nothing defines yet is no error in the file: Genkit apps
register them in code (`output: {schema: Recipe}`, `{{list items}}`, `tools: [getWeather]`).
`dotprompt check` warns, naming the file:line and the `[tool.dotprompt]` setting that would define
it (an error with --strict); rendering or running the prompt fails with the same words. A near
miss of a name that is known (`strng` for `string`) is a typo, and stays an error at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .._util.suggest import TYPO_CUTOFF, near_miss
from ..errors import PromptFileError

__all__ = ["SETTING", "TYPO_CUTOFF", "Kind", "Unresolved", "near_miss"]

Kind = Literal["schema", "helper", "tool"]
SETTING: dict[Kind, str] = {"schema": "schemas", "helper": "helpers", "tool": "tools"}
_DEFINE: dict[Kind, str] = {"schema": "define_schema", "helper": "define_helper", "tool": "define_tool"}
# TYPO_CUTOFF and near_miss live in _util/suggest.py (schema/picoschema.py asks them too); named here as before.


@dataclass(frozen=True)
class Unresolved:
    kind: Kind
    name: str
    path: str | None
    line: int | None
    column: int | None = None
    where: str | None = None  # e.g. "output.schema" (None: the template)
    extra_hint: str | None = None  # another way to define it (a tool: toolDefs)
    suggestion: str | None = None  # "did you mean `x`?" when a defined name is close: said instead of the hint

    @property
    def message(self) -> str:
        where = f" (in {self.where})" if self.where else ""
        return f"no registered module defines {self.kind} `{self.name}`{where}"

    @property
    def hint(self) -> str:
        if self.suggestion:
            return self.suggestion
        other = f", or {self.extra_hint}" if self.extra_hint else f", or call lib.{_DEFINE[self.kind]}({self.name!r}, ...)"
        return (f"list the module that defines it in `[tool.dotprompt] {SETTING[self.kind]}` in pyproject.toml"
                f"{other}")

    def error(self) -> PromptFileError:
        """What rendering the prompt raises while the name is still undefined."""
        return PromptFileError(self.message, path=self.path, line=self.line, column=self.column, hint=self.hint)
