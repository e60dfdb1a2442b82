"""The documentation's promises: a short README, and no relative link that leads nowhere or out of the repository."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

README_MAX_LINES = 150

# [text](target) and [text](target "title"); reference definitions `[name]: target`.
INLINE_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documentation_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def link_targets(markdown: str) -> list[str]:
    """Every link target written in the text, code (fenced blocks, spans, indented blocks) left out."""
    text = FENCE.sub("", markdown)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("    "))
    text = CODE_SPAN.sub("", text)
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def relative_path(target: str) -> str | None:
    """The file part of a relative link, or None for a web address, a mail link or an anchor on the same page."""
    if SCHEME.match(target) or target.startswith(("#", "//")):
        return None
    return target.split("#", 1)[0].split("?", 1)[0] or None


def test_link_targets_skip_code_and_keep_every_link_form():
    text = ('See [a](docs/a.md#x), ![img](pic.png "t"), `[no](code.md)` and [web](https://e.org).\n\n'
            "```\n[no](fenced.md)\n```\n\n    [no](indented.md)\n\n[ref]: other/b.md\n")
    assert link_targets(text) == ["docs/a.md#x", "pic.png", "https://e.org", "other/b.md"]
    assert [relative_path(t) for t in ["docs/a.md#x", "#top", "https://e.org", "mailto:a@b.c"]] == ["docs/a.md", None,
                                                                                                   None, None]


def test_readme_is_a_short_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the manual belongs in docs/"


def test_every_relative_link_points_at_a_file_of_the_repository():
    root = ROOT.resolve()
    broken = []
    for page in documentation_files():
        for target in link_targets(page.read_text(encoding="utf-8")):
            path = relative_path(target)
            if path is None:
                continue
            resolved = (page.parent / path).resolve()
            if root not in resolved.parents or not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to nothing, or out of the repository:\n" + "\n".join(broken)


def test_ci_builds_the_docs_strictly():
    # `-q` would hide the warnings `--strict` turns into a failure (mkdocs 1.6), so it must not be there.
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    builds = [line.split("#", 1)[0].split() for line in ci.splitlines() if "mkdocs build" in line.split("#", 1)[0]]
    assert builds, ".ci/run does not build the documentation"
    assert all("--strict" in words and "-q" not in words and "--quiet" not in words for words in builds), builds
