"""The code of every diagnostic `dotprompt check` (and the language server) reports: one table.

A code is a kebab-case rule name, as ruff's and mypy's are: it says what is wrong without a lookup
(`undeclared-variable`, not `DP104`), and it is what a user writes to silence a warning
(`[tool.dotprompt] ignore`, `# dotprompt: ignore[code]`). Each code has one level: an error is a
prompt that fails or renders wrongly at run time, and cannot be silenced; a warning is a likely
mistake that may be fine in the application (a tool defined only at call time), and can be.
A near miss of a known name is its own error code (`misspelled-tool`), apart from the warning for a
name nothing defines (`unknown-tool`). docs/check-diagnostics.md lists the same codes, in this order
(a test holds the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CODES", "Code", "Level", "warning_codes"]

Level = Literal["error", "warning"]


@dataclass(frozen=True)
class Code:
    level: Level
    summary: str  # one line: what the diagnostic means


CODES: dict[str, Code] = {
    # errors: the prompt or test file is unusable or wrong (`check` exits 1)
    "invalid-prompt-file": Code("error", "The prompt file does not load: invalid YAML, a bad frontmatter value, a "
                                         "template syntax error or an invalid schema."),
    "invalid-partial": Code("error", "A partial file (`_name.prompt`) does not load."),
    "invalid-test-file": Code("error", "A test file (`*.test.yaml`) or its `eval:` section does not load."),
    "invalid-test-case": Code("error", "A test case names no prompt, its input does not fit the input schema, or a "
                                       "path it checks cannot exist in the output schema."),
    "undeclared-variable": Code("error", "A template variable the input schema does not declare: it renders as "
                                         "empty text."),
    "invalid-output-schema": Code("error", "The output schema is refused by its output format."),
    "invalid-input-default": Code("error", "A value of `input.default` does not fit the input schema."),
    "misspelled-tool": Code("error", "A tool name that is a near miss of a known tool."),
    "invalid-tool": Code("error", "A tool defined in code whose parameters have no JSON Schema: every call of the "
                                  "prompt fails."),
    "misspelled-schema": Code("error", "A schema name that is a near miss of a known schema."),
    "misspelled-helper": Code("error", "A helper name that is a near miss of a known helper."),
    "unknown-mcp-server": Code("error", "A tool `SERVER/TOOL` names an MCP server that is not configured."),
    "unknown-mcp-tool": Code("error", "The MCP server's cached tool list has no such tool (or nothing matches the "
                                      "pattern)."),
    # warnings: a likely mistake (`check --strict` fails on it); each can be ignored
    "unknown-tool": Code("warning", "A tool no listed module, `toolDefs` or library defines."),
    "unknown-schema": Code("warning", "A named schema no listed module or library defines."),
    "unknown-helper": Code("warning", "A template helper no listed module or library defines."),
    "unchecked-mcp-tool": Code("warning", "An MCP tool that cannot be checked: its server's tool list is not "
                                          "cached, or was cached for another configuration."),
    "unknown-key": Code("warning", "A frontmatter key dotprompt does not know (a typo, or an extension without "
                                   "a dot)."),
    "ignored-key": Code("warning", "A key under `input:` or `output:` that Genkit ignores."),
    "unknown-output-format": Code("warning", "`output.format` names no known format."),
    "uninstructive-output-schema": Code("warning", "The output schema gives the model no instructions (an `enum` "
                                                   "with no values): any reply is accepted."),
    "undeclared-default": Code("warning", "An `input.default` key the input schema does not declare: it is never "
                                          "validated."),
    "empty-file": Code("warning", "The prompt file is empty: it renders no messages."),
    "unopened-frontmatter": Code("warning", "Frontmatter keys with no opening `---`: they are read as prompt text."),
    "handlebars-syntax": Code("warning", "Handlebars syntax in a file rendered with jinja2."),
    "guessed-engine-printing": Code("warning", "A value jinja2 prints otherwise than Handlebars, in a file whose "
                                               "engine was guessed."),
    "lookalike-name": Code("warning", "A prompt name that looks like another's (Unicode normalisation or "
                                      "look-alike letters)."),
    "stale-types": Code("warning", "The typed module `dotprompt types` wrote no longer matches the prompts."),
    "invalid-types-setting": Code("warning", "`[tool.dotprompt] types` is not a usable path."),
    "invalid-ignore": Code("warning", "An ignore (`[tool.dotprompt] ignore` or `# dotprompt: ignore[...]`) names an "
                                      "unknown code, or an error's code (errors cannot be ignored)."),
}


def warning_codes() -> list[str]:
    return [name for name, code in CODES.items() if code.level == "warning"]
