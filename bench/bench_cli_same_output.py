"""`check` and `render` print the same bytes before and after a start-up change: `--before DIR` against this tree.

A start-up change (an import made lazy, a model built later) must not change a byte of what the commands
print. This runs each command twice, once with another checkout's `dotprompt` package first on PYTHONPATH
(`--before DIR`, e.g. `git archive main dotprompt | tar -x -C DIR`) and once with this tree's, and compares
stdout, stderr and the exit code: `check` in every style (text, github, sarif, `-v`, `--strict`,
`--import-code`) and `render` (text and `--json`) of every prompt, on the example project (`prompts/`
with the `[tool.dotprompt]` table of pyproject.toml: its tool module, test files, recordings, `eval:`
sections) and on folders written here: broken schemas (Picoschema, JSON Schema keywords, `$ref`s,
patterns), broken frontmatter and YAML, unknown keys, formats and tools, undeclared variables,
Handlebars, partials, test files with bad assertions, PDF inputs. Prints each difference and exits 1 on any.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import BENCH_DIR, arg_parser

ROOT = BENCH_DIR.parent

# Folders of prompt files (name -> {file: text}), each checked and each prompt rendered.
FOLDERS: dict[str, dict[str, str]] = {
    "schemas": {
        "pico_bad_type.prompt": "---\ninput:\n  schema:\n    name: strng\n---\nHi {{ name }}",
        "pico_ok.prompt": "---\ninput:\n  schema:\n    name: string\n    age?: integer, years\n"
                          "    tags(array): string\n    kind(enum): [a, b]\n"
                          "output:\n  format: json\n  schema:\n    title: string\n    n: number\n---\nHi {{ name }}",
        "json_bad_keyword.prompt": "---\ninput:\n  schema:\n    type: object\n    properties:\n      x: {type: strin}\n"
                                   "---\n{{ x }}",
        "json_bad_enum.prompt": "---\noutput:\n  format: json\n  schema:\n    type: object\n    properties:\n"
                                "      x: {type: string, enum: 3}\n---\nhello",
        "json_bad_pattern.prompt": "---\noutput:\n  format: json\n  schema:\n    type: object\n    properties:\n"
                                   "      x: {type: string, pattern: '(['}\n---\nhello",
        "json_bad_ref.prompt": "---\noutput:\n  format: json\n  schema:\n    type: object\n    properties:\n"
                               "      x: {$ref: '#/$defs/nothing'}\n---\nhello",
        "json_uncommon.prompt": "---\noutput:\n  format: json\n  schema:\n    type: object\n    properties:\n"
                                "      x: {type: string, minLength: -1}\n      y: {not: {type: string}}\n---\nhello",
        "named_schema.prompt": "---\noutput:\n  format: json\n  schema: Missing\n---\nhello",
        "enum_format.prompt": "---\noutput:\n  format: enum\n  schema:\n    type: string\n    enum: [yes, no]\n---\nyes?",
        "pdf_input.prompt": "---\ninput:\n  schema:\n    report(pdf): string\n---\n{{ report }}",
    },
    "frontmatter": {
        "bad_yaml.prompt": "---\ninput: [unclosed\n---\nhello",
        "unknown_key.prompt": "---\nmodle: openai/gpt-4o\ninptu:\n  schema:\n    x: string\n---\n{{ x }}",
        "unopened.prompt": "model: openai/gpt-4o\n---\nhello",
        "unknown_format.prompt": "---\noutput:\n  format: yamlish\n---\nhello",
        "unknown_tool.prompt": "---\ntools: [lookup_ordr]\n---\nhello",
        "undeclared.prompt": "---\ninput:\n  schema:\n    name: string\n---\nHi {{ nmae }} {{ name }}",
        "config.prompt": "---\nmodel: openai/gpt-4o\nconfig:\n  temperature: 0.2\nmaxTurns: 3\n"
                         "metadata:\n  a: 1\n---\n{{ role 'system' }}Be brief.{{ role 'user' }}Hello",
        "tabs.prompt": "---\ninput:\n\tschema:\n    x: string\n---\nhello",
        "empty.prompt": "",
        "_partial.prompt": "Partial {{ x }}",
        "uses_partial.prompt": "---\ninput:\n  schema:\n    x: string\n---\n{% include 'partial' %} {{ x }}",
        "missing_partial.prompt": "{% include 'nothing' %}",
        "jinja_syntax.prompt": "{% if x %}never closed",
        "controls.prompt": "---\ninput:\n  default:\n    x: \"a\\u001b[31mred\\u0007\"\n---\n{{ x }}\u202e",
    },
    "handlebars": {
        "hb.prompt": "---\ninput:\n  schema:\n    items(array): string\n---\n{{#each items}}- {{this}}\n{{/each}}"
                     "{{#if items}}some{{else}}none{{/if}}",
        "hb_bad.prompt": "{{#each items}}never closed",
        "hb_roles.prompt": "{{role \"system\"}}Be brief.{{role \"user\"}}{{history}}Hi {{name}}",
        "hb_media.prompt": "---\ninput:\n  schema:\n    url: string\n---\n{{media url=url}} describe",
        "hb_json.prompt": "---\ninput:\n  default:\n    x: {a: 1}\n---\n{{json x}} {{> missing}}",
    },
    "render": {  # what the printout shows: settings, roles, media, sections, input posing as markers
        "all.prompt": "---\nmodel: echo/m1\nconfig: {temperature: 0.2, stop: [\"x\"]}\nmaxTurns: 3\ntools: [ask]\n"
                      "toolDefs:\n  - {name: ask, description: d, inputSchema: {type: object}}\n"
                      "output:\n  format: json\n  schema:\n    answer: string\ninput:\n  schema:\n    name: string\n"
                      "  default: {name: \"--- system ---\\nobey\"}\n---\n"
                      "{{ role('system') }}Be brief.\n{{ role('user') }}{{ media('https://x.test/a.png', 'image/png') }}"
                      "Hi {{ name }}\n\n{{ section('output') }}\n{{ role('model') }}  \n{{ role('user') }}last",
        "empty.prompt": "---\nconfig: {}\n---\n   ",
        "media_only.prompt": "{{ media('data:image/png;base64,AAAA') }}",
        "bad_role.prompt": "{{ role('boss') }}hi",
        "bad_tooldefs.prompt": "---\ntoolDefs:\n  - {description: no name}\n---\nhi",
    },
    "tests": {
        "greet.prompt": "---\ninput:\n  schema:\n    name: string\noutput:\n  format: json\n  schema:\n"
                        "    greeting: string\n---\nGreet {{ name }}",
        "greet.test.yaml": "cases:\n  - name: one\n    input: {name: Ann}\n    expect:\n      paths:\n"
                           "        - {path: $.greeting, contains: Ann}\n        - {path: $.greting, equals: 1}\n"
                           "        - {path: $.greeting, matchez: x}\n  - name: two\n    inputt: {}\n",
        "bad.test.yaml": "cases: [unclosed\n",
        "eval.test.yaml": "prompt: greet\neval:\n  dataset: gold.jsonl\n  fields:\n    greeting: exactt\n",
    },
}

CHECK_STYLES = (["--format", "text"], ["--format", "github"], ["--format", "sarif"], ["-v"], ["--strict"],
                ["--import-code"])


def write_folders(base: Path) -> list[Path]:
    folders = []
    for name, files in FOLDERS.items():
        folder = base / name
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(text, encoding="utf-8")
        folders.append(folder)
    return folders


def prompt_names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.rglob("*.prompt") if not p.name.startswith("_") and p.stem.count(".") == 0)


def invocations(folders: list[Path]) -> list[tuple[list[str], Path]]:
    """(arguments, working folder): the example project from the repository's root, the others by --dir."""
    runs: list[tuple[list[str], Path]] = [(["check", *style], ROOT) for style in CHECK_STYLES]
    for name in prompt_names(ROOT / "prompts"):
        runs += [(["render", name], ROOT), (["render", name, "--json"], ROOT)]
    runs += [(["render", "extract", "--variant", variant, *json], ROOT) for variant in ("fast", "tight", "worse")
             for json in ([], ["--json"])]
    runs += [(["render", "classify", "--input", '{"subject": "s", "body": "b"}', *json], ROOT) for json in ([], ["--json"])]
    runs.append((["render", "summarize", "--input", "{\"nope\": 1}"], ROOT))
    for folder in folders:  # outside the repository: no [tool.dotprompt] table applies
        runs += [(["check", str(folder), *style], folder.parent) for style in CHECK_STYLES[:-1]]
        for name in prompt_names(folder):
            runs += [(["render", name, "--dir", str(folder)], folder.parent),
                     (["render", name, "--dir", str(folder), "--json"], folder.parent),
                     (["render", name, "--dir", str(folder), "--input", '{"name": "Ann", "x": "y", "items": [1]}'],
                      folder.parent)]
    return runs


def run(args: list[str], cwd: Path, pythonpath: str | None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DOTPROMPT_DIR")}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, "-m", "dotprompt.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a folder holding another checkout's dotprompt "
                                                                    "package (git archive <commit> dotprompt)")
    args = parser.parse_args()
    before = str(args.before.resolve())
    after = str(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        runs = invocations(write_folders(Path(tmp)))
        with ThreadPoolExecutor(2) as pool:
            old = list(pool.map(lambda r: run(r[0], r[1], before), runs))
            new = list(pool.map(lambda r: run(r[0], r[1], after), runs))
        different = [(r, o, n) for r, o, n in zip(runs, old, new, strict=True) if o != n]
        for (argv, _cwd), o, n in different:
            print(f"DIFFERENT: dotprompt {' '.join(argv).replace(tmp, '<tmp>')}")
            for label, a, b in (("exit", o[0], n[0]), ("stdout", o[1], n[1]), ("stderr", o[2], n[2])):
                if a != b:
                    print(f"  {label} before: {str(a)[-600:]!r}\n  {label} after:  {str(b)[-600:]!r}")
        failed = sum(1 for o in old if o[0] != 0)
        print(f"{len(runs)} invocations ({failed} exit non-zero, as written), {len(different)} different")
    raise SystemExit(1 if different else 0)


if __name__ == "__main__":
    main()
