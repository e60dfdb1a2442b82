"""The render preview (`dotprompt.renderPreview`): what the prompt would send, for each input the
prompt's test cases give (else its defaults), as `dotprompt render --json` prints it.

The editor's text is rendered, saved or not, under the library's render budget (time and size), so
a hostile file's preview ends in an error naming the budget, not in a hung server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DotpromptError
from .project import Project, file_kind

__all__ = ["preview"]

PREVIEW_CASES = 20  # test cases rendered at most: a preview is for reading


def preview(project: Project, path: str, text: str) -> dict[str, Any]:
    """{"prompt": label, "renders": [{"case": name or None, "input": ..., "rendered": ... | "error": ...}]}."""
    if file_kind(path) != "prompt":
        return {"prompt": None, "renders": [], "error": f"{Path(path).name} is not a prompt file (NAME.prompt)"}
    info = project.info_for(path)
    try:
        prompt = project.library.from_source(text, info.name, path=path, variant=info.variant)
    except DotpromptError as exc:
        return {"prompt": info.label, "renders": [], "error": str(exc)}
    renders = []
    for case, data in _inputs(project, path)[:PREVIEW_CASES]:
        try:
            rendered: dict[str, Any] = {"rendered": prompt.render(data).to_dict()}
        except DotpromptError as exc:
            rendered = {"error": str(exc)}
        renders.append({"case": case, "input": data, **rendered})
    return {"prompt": info.label, "renders": renders}


def _inputs(project: Project, path: str) -> list[tuple[str | None, Any]]:
    """(case name, input) of each case of the prompt's test file; else one render of the defaults."""
    test_file = Path(path).with_suffix("").with_suffix(".test.yaml") if path.endswith(".prompt") else None
    if test_file is not None and test_file.is_file():
        from ..testing.cases import load_test_file

        try:
            cases = load_test_file(test_file, project.library.directory)
        except DotpromptError:
            cases = []
        if cases:
            return [(case.name, case.input) for case in cases]
    return [(None, None)]
