"""Peak memory of reading a gold dataset (`read_dataset`): a CSV and the same rows as JSON lines.

    python bench/bench_dataset_memory.py [--mb 96]

Writes a CSV of about `--mb` megabytes (`id`, `input.text` of ~1 KB, `expected.total`,
`expected.vendor.name`) and the same rows as JSON lines into a temporary folder, then reads each in
a fresh child process and prints its peak RSS (ru_maxrss), the interpreter's own baseline and the
file size. The rows themselves are kept (read_dataset returns a list), so JSON lines is the floor.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import resource, sys
from dotprompt.evals.datasets import read_dataset
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = read_dataset(sys.argv[1])
print(len(rows), before // 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
'''


def write_files(folder: Path, megabytes: int) -> tuple[Path, Path]:
    text = ("Invoice from ACME GmbH, Musterstrasse 1, 12345 Berlin. Total due: 42.50 EUR. " * 13)[:1000]
    rows = max(1, megabytes * 1024 * 1024 // 1050)
    csv_path, jsonl_path = folder / "gold.csv", folder / "gold.jsonl"
    with csv_path.open("w", encoding="utf-8", newline="") as csv_out, jsonl_path.open("w", encoding="utf-8") as lines:
        csv_out.write("id,input.text,expected.total,expected.vendor.name\r\n")
        for n in range(rows):
            csv_out.write(f'r{n},"{text} #{n}",{n}.5,ACME\r\n')
            lines.write(json.dumps({"id": f"r{n}", "input": {"text": f"{text} #{n}"},
                                    "expected": {"total": n + 0.5, "vendor": {"name": "ACME"}}}) + "\n")
    return csv_path, jsonl_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=96, help="size of the CSV to read, in megabytes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for path in write_files(Path(folder), args.mb):
            done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
            rows, base, peak = done.stdout.split()
            size = path.stat().st_size / 1024 / 1024
            print(f"{path.suffix:7} {size:6.1f} MB, {rows} rows: peak RSS {int(peak):5d} MB (interpreter {base} MB)")


if __name__ == "__main__":
    main()
