"""`dotprompt types` on 500 generated prompt files, as a subprocess (best of N), then `types --check`.

The folder is bench_check.py's: five namespaces, one file in ten a `.fast` variant, each with a
Picoschema input (default, enum, array, optional fields) and output (enum, nested object, array of
objects). The module written must import and `types --check` must pass, or the timing means nothing.
`--compare-dcg` also times datamodel-code-generator (the `types` extra) on the same 500 output
schemas in one call (pydantic models only: no TypedDicts, no partial twins), the figure behind writing
the generator by hand (docs/typed-prompts.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from _common import PEERS_BIN, Result, arg_parser, report
from bench_check import generate

TARGET_SECONDS = 5.0  # issue 33: 500 prompts in under 5 s


def timed(command: list[str], cwd: Path, repeat: int) -> list[float]:
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command[1:])} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return times


def dcg_seconds(root: Path, dotprompt: str) -> float:
    """datamodel-code-generator on every output schema of the folder, as `$defs` of one document."""
    from datamodel_code_generator import DataModelType, InputFileType, LiteralType, PythonVersion
    from datamodel_code_generator import generate as dcg
    from datamodel_code_generator.format import Formatter

    python = str(Path(dotprompt).with_name("python"))
    script = ("import json, sys; from dotprompt import PromptLibrary; lib = PromptLibrary(sys.argv[1]); "
              "print(json.dumps({f'P{i}': lib.load(p.name, p.variant).metadata['output']['schema'] "
              "for i, p in enumerate(lib.prompts())}))")
    schemas = json.loads(subprocess.run([python, "-c", script, str(root / "prompts")], capture_output=True,
                                        text=True, check=True).stdout)
    document = json.dumps({"$defs": schemas})
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcg(document, input_file_type=InputFileType.JsonSchema, output_model_type=DataModelType.PydanticV2BaseModel,
            enum_field_as_literal=LiteralType.All, use_field_description=True, use_union_operator=True,
            use_standard_collections=True, disable_timestamp=True, target_python_version=PythonVersion.PY_311,
            formatters=[Formatter.RUFF_FORMAT])
    return time.perf_counter() - start


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500, help="prompt files to generate (default 500)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--dotprompt", default=str(PEERS_BIN / "dotprompt"), help="the dotprompt command")
    parser.add_argument("--compare-dcg", action="store_true", help="also time datamodel-code-generator")
    args = parser.parse_args()
    args.dotprompt = str(Path(args.dotprompt).absolute())

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "prompts").mkdir()
        generate(root / "prompts", args.files)
        (root / "pyproject.toml").write_text("[tool.dotprompt]\n", encoding="utf-8")
        times = timed([args.dotprompt, "types"], root, args.repeat)
        (root / "prompt_types.py").unlink()
        times += timed([args.dotprompt, "types"], root, 1)  # each run but the last rewrote nothing
        check = timed([args.dotprompt, "types", "--check"], root, args.repeat)
        module = root / "prompt_types.py"
        python = str(Path(args.dotprompt).with_name("python"))
        subprocess.run([python, "-c", "import prompt_types"], cwd=root, check=True)
        print(f"module: {module.stat().st_size // 1024} KB, {module.read_text().count(chr(10))} lines")
        dcg = dcg_seconds(root, args.dotprompt) if args.compare_dcg else None
    best = min(times)
    print(f"dotprompt types, {args.files} files: best {best:.3f} s of {', '.join(f'{t:.3f}' for t in times)} s "
          f"(process start-up included); types --check: best {min(check):.3f} s")
    if dcg is not None:
        print(f"datamodel-code-generator, the {args.files} output models alone, one call: {dcg:.3f} s")
    report(Result(f"types {args.files} files", f"{best:.2f} s", f"< {TARGET_SECONDS:.1f} s", best < TARGET_SECONDS),
           args.json)


if __name__ == "__main__":
    main()
