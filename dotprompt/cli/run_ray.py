"""`dotprompt run NAME --input-file DATA --output OUT --engine ray [--address auto] [--resume]`: Ray Data."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..prompts.loader import prompts_dir
from .common import EXIT_FAILED, EXIT_OK, CommandLineError

__all__ = ["run_on_ray"]

READERS = {".jsonl": "read_json", ".json": "read_json", ".parquet": "read_parquet", ".csv": "read_csv"}
WRITERS = {".parquet": "write_parquet", ".csv": "write_csv"}  # anything else: a folder of JSON-lines files


def run_on_ray(args: argparse.Namespace) -> int:
    from ..batch import ray as dray

    ray = _import_ray()
    source: Path = args.input_file
    if not source.exists():
        raise CommandLineError(f"cannot read {source}: no such file or folder")
    reader = READERS.get(source.suffix.lower()) or _folder_reader(source)
    output: Path = args.output
    writer = WRITERS.get(output.suffix.lower(), "write_json")
    if output.exists() and not output.is_dir():
        raise CommandLineError(f"--output {output} is a file: with --engine ray it is a folder Ray Data writes into")
    if output.is_dir() and any(output.iterdir()) and not args.resume:
        raise CommandLineError(f"--output {output} already holds results: add --resume to run only the rows not "
                               "written yet, or choose another folder")
    if args.resume and writer != "write_json":
        raise CommandLineError("--resume reads what was written: it needs a JSON-lines --output folder (no suffix)")
    ray.init(address=args.address, log_to_driver=False) if args.address else ray.init(log_to_driver=False)
    started = time.perf_counter()
    ds = getattr(ray.data, reader)(str(source))
    done = dray.written_keys(output) if args.resume else set()
    ds = dray.resume_filter(ds, done)
    folder = prompts_dir(args.dir).resolve()
    result = dray.map_prompt(ds, args.name, prompts_dir=str(folder), variant=args.variant, model=args.model,
                             workers=args.workers, in_flight=args.concurrency, engine=args.template_engine)
    before = _written_files(output)
    getattr(result, writer)(str(output))
    succeeded, failed = _count(output, before) if writer == "write_json" else (None, None)
    seconds = time.perf_counter() - started
    counts = f"{succeeded} succeeded, {failed} failed, " if succeeded is not None else ""
    print(f"{counts}{len(done)} skipped (already written) in {seconds:.1f} s -> {output}/", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise CommandLineError("--engine ray needs Ray Data: pip install 'dotprompt-toolkit[ray]'") from None
    return ray


def _folder_reader(source: Path) -> str:
    if source.is_dir():
        suffixes = {path.suffix.lower() for path in source.iterdir() if path.is_file()}
        for suffix, reader in READERS.items():
            if suffix in suffixes:
                return reader
    raise CommandLineError(f"--input-file {source}: with --engine ray, give a .jsonl, .json, .parquet or .csv file "
                           "(or a folder of them)")


def _written_files(folder: Path) -> set[Path]:
    return set(folder.rglob("*")) if folder.is_dir() else set()


def _count(folder: Path, before: set[Path]) -> tuple[int, int]:
    succeeded = failed = 0
    for path in sorted(set(folder.rglob("*.json*")) - before):
        for raw in path.read_bytes().splitlines():
            if raw.strip():
                if json.loads(raw).get("error") is None:
                    succeeded += 1
                else:
                    failed += 1
    return succeeded, failed
