"""The documentation of the package's shape stays true to the tree it describes.

- docs/architecture.md draws every package and module of dotprompt/, one line each, and names nothing that
  does not exist; its floors and its table of packages agree with FLOORS (tests/test_package_layout.py).
- Every path a docstring, a comment or a documentation page names (`providers/gemini.py`, `local/server.py`)
  is a file of the repository.
- tests/ folders are named after the package they test (tests/providers for dotprompt/providers), or are one
  of the few folders of a kind of test, each named on the architecture page.

Each check reads the tree, so a module added tomorrow is asked for by name, with where its line goes.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT
from tests.test_package_layout import FLOORS

PACKAGE = ROOT / "dotprompt"
PAGE = ROOT / "docs" / "architecture.md"

# One tree line: the drawing (`│   ` or four spaces per level above, then `├── ` or `└── `), a name, its job.
TREE_LINE = re.compile(r"^(?P<indent>(?:│   |    )*)[├└]── (?P<name>\S+)")
FLOOR_LINE = re.compile(r"^│\s+floor (?P<floor>\d+)\b")

# tests/ folders that hold a kind of test rather than one package's: each is named on the architecture page.
KINDS_OF_TEST = {
    "live": "tests that need the local model (marker `live`)",
    "channels": "every output channel's escaping, fed hostile strings",
    "nonfinite": "NaN and infinities wherever numbers enter or leave",
    "editors": "the editors/ folder: the VS Code extension's grammar and package, Neovim against the server",
}
DATA_FOLDERS = {"fixtures", "planted", "__recordings__", "__pycache__"}  # test data, not test code


def page_tree(text: str) -> tuple[dict[str, int | None], list[str]]:
    """(path under dotprompt/ -> floor of the section it is drawn in, problems) from the page's tree block."""
    block = text.split("## The tree", 1)[1].split("```", 2)[1]
    drawn: dict[str, int | None] = {}
    stack: list[str] = []
    floor: int | None = None
    problems = []
    for number, line in enumerate(block.splitlines(), 1):
        if (marker := FLOOR_LINE.match(line)) is not None:
            floor = int(marker["floor"])
        elif (entry := TREE_LINE.match(line)) is not None:
            depth = len(entry["indent"]) // 4
            if depth > len(stack):
                problems.append(f"tree line {number} is indented under no folder: {line.strip()}")
                continue
            stack[depth:] = [entry["name"].rstrip("/")]
            drawn["/".join(stack) + ("/" if entry["name"].endswith("/") else "")] = floor
    return drawn, problems


def package_entries() -> set[str]:
    """Every package (`x/`) and module (`x/y.py`) of dotprompt/, as paths under it; `__init__.py` is its package."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if path.name != "__init__.py":
            found.add(relative.as_posix())
        elif relative.parent != Path("."):
            found.add(relative.parent.as_posix() + "/")
    return found


def test_the_page_draws_every_package_and_module_and_nothing_else():
    drawn, problems = page_tree(PAGE.read_text(encoding="utf-8"))
    assert not problems, problems
    missing = sorted(package_entries() - set(drawn))
    absent = sorted(name for name in drawn if not (PACKAGE / name).exists())
    assert not missing, ("docs/architecture.md: add one line for each of these to the tree, under its folder, with "
                         "its job in a few words: " + ", ".join(f"dotprompt/{m}" for m in missing))
    assert not absent, "docs/architecture.md names what dotprompt/ does not hold: " + ", ".join(absent)


def test_the_page_puts_each_top_level_entry_on_its_floor():
    drawn, _ = page_tree(PAGE.read_text(encoding="utf-8"))
    floors = {name: number for number, names in enumerate(FLOORS) for name in names}
    wrong = [f"{name} is drawn on floor {floor}, FLOORS has {floors.get(name.rstrip('/').removesuffix('.py'))}"
             for name, floor in drawn.items() if "/" not in name.rstrip("/") and name != "__init__.py"
             and floor != floors.get(name.rstrip("/").removesuffix(".py"))]
    assert not wrong, wrong


def test_the_table_has_one_row_per_top_level_entry_with_its_floor():
    text = PAGE.read_text(encoding="utf-8").split("## One line per package", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in text.splitlines() if line.startswith("| `")]
    tabled = {name: cell.strip() for names, cell in rows for name in re.findall(r"`(\w+)`", names)}
    tabled.pop("dotprompt", None)
    floors = {name: str(number) for number, names in enumerate(FLOORS) for name in names}
    assert tabled == floors, {name: (tabled.get(name), floors.get(name)) for name in {*tabled, *floors}
                              if tabled.get(name) != floors.get(name)}


def test_the_tree_reader_sees_nesting_and_floors():
    text = ("## The tree\n\n```\ndotprompt/\n│  floor 0: ground\n├── a.py   job\n├── b/     job\n│   ├── c.py  job\n"
            "│   └── d/\n│       └── e.py\n│  floor 1: up\n└── f.py\n```\n")
    assert page_tree(text) == ({"a.py": 0, "b/": 0, "b/c.py": 0, "b/d/": 0, "b/d/e.py": 0, "f.py": 1}, [])


# -- paths named in prose -------------------------------------------------------------------------------

PATH = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w-]*/)+[A-Za-z_]\w*\.py)\b")  # with a folder: `local/server.py`
BARE = re.compile(r"(?<![\w./-])([A-Za-z_]\w*\.py)\b")  # a module alone: `server.py`
# Bare names in dotprompt/ that are not modules of ours: a user's file, or a name a module avoids.
NOT_OURS = {"list.py": "the name cli/listing.py avoids", "checks.py": "a user's module in an example",
            "setup.py": "a Python project's manifest", "prompt_types.py": "the module `dotprompt types` writes for a user",
            "__init__.py": "a package's own", "__main__.py": "a package's own", "conftest.py": "pytest's"}
# Paths of examples in tests/ (a user's project) and of folders beside the checkout (the shared tools).
OUTSIDE = re.compile(r"^(lib|myapp|myap|shared|\.\./shared)/")


def resolves(path: str, where: Path) -> bool:
    """`path` from the repository, from dotprompt/ or one of its packages (`dialects/strict.py` on the providers'
    line), or from the folder of `where` or any folder above it; a bare module name anywhere in the repository."""
    if "/" not in path:
        return any(next(folder.rglob(path), None) for folder in SOURCE_FOLDERS)
    bases = [ROOT, PACKAGE, *(p for p in PACKAGE.iterdir() if p.is_dir()), *where.parents]
    return any((base / path).is_file() for base in bases)


SOURCE_FOLDERS = [PACKAGE, ROOT / "tests", ROOT / "bench", ROOT / "examples"]


def named_paths(files: list[Path], pattern: re.Pattern[str]) -> list[str]:
    stale = []
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            stale += [f"{file.name}:{number}: {path}" if ROOT not in file.parents else
                      f"{file.relative_to(ROOT)}:{number}: {path}" for path in pattern.findall(line)
                      if not OUTSIDE.match(path) and path not in NOT_OURS and not resolves(path, file)]
    return stale


def test_every_path_the_code_and_the_docs_name_exists():
    prose = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "bench").glob("*.md"))]
    code = sorted([*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").glob("*.py")])
    code.remove(Path(__file__).resolve())  # its own examples of stale paths
    stale = named_paths(prose + code, PATH) + named_paths(sorted(PACKAGE.rglob("*.py")), BARE)
    assert not stale, "these paths lead nowhere (a module moved or was renamed): write where it is now:\n" + \
        "\n".join(stale)


def test_a_moved_module_is_caught(tmp_path):
    module = PACKAGE / "providers" / "vertex.py"
    assert named_paths([module], PATH) == []
    fake = tmp_path / "m.py"
    fake.write_text('"""The wire is models/gemini.py\'s; see local_server.py and providers/gemini.py."""\n')
    assert [s.split(": ")[-1] for s in named_paths([fake], PATH) + named_paths([fake], BARE)] == [
        "models/gemini.py", "local_server.py"]


# -- tests/ mirrors the package ---------------------------------------------------------------------------


def test_test_folders_are_named_after_the_package_they_test():
    folders = sorted({p.parent.relative_to(ROOT / "tests") for p in (ROOT / "tests").rglob("*.py")} - {Path(".")})
    folders = [f for f in folders if not DATA_FOLDERS & set(f.parts)]
    wrong = [f.as_posix() for f in folders
             if not (PACKAGE / f / "__init__.py").is_file() and f.parts[0] not in KINDS_OF_TEST]
    assert not wrong, ("name each tests/ folder after the dotprompt package it tests (tests/providers for "
                       "dotprompt/providers, tests/engines/handlebars for dotprompt/engines/handlebars), or add it "
                       f"to KINDS_OF_TEST and docs/architecture.md: {wrong}")


def test_each_kind_of_test_folder_is_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    assert [kind for kind in KINDS_OF_TEST if f"`tests/{kind}/`" not in text] == []
