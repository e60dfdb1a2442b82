"""The work of streaming 256 KB and 1 MB replies, counted in instructions: linear, whatever the load.

bench_stream_large.py times the same runs, but on a shared 2-core machine its 1 MB / 256 KB time
ratio swings (3.6 to 6.4 for the same tree, run after run), so it cannot tell 4.3 from 4.9.
Instructions do not depend on the load: each run here is one child under
`valgrind --tool=callgrind` (every chunk's output built, then the final parse, as
bench_stream_large.py does), less a child that builds the same reply and streams nothing, so
import, start-up and building the reply cancel out. Printed: instructions per shape and size,
and the 1 MB / 256 KB ratio (4.0 is linear; the goal is at most 4.6). Needs valgrind.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from _common import BENCH_DIR, Result, arg_parser, report_all
from bench_stream_large import LINEAR_GOAL, SIZES, format_of

ROOT = BENCH_DIR.parent
_CHILD = """
import sys
sys.path.insert(0, {bench!r})
from bench_stream_large import REPLIES, chunked, format_of
from dotprompt.formats import get_format
text = REPLIES[{shape!r}]({chars})
chunks = chunked(text)
handler = get_format(format_of({shape!r})).handler(None)
if {stream!r}:
    stream = handler.new_stream()
    for chunk in chunks:
        out = stream.feed(chunk)
    handler.parse_text(text)
"""
_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(shape: str, chars: int, stream: bool) -> int:
    code = _CHILD.format(bench=str(BENCH_DIR), shape=shape, chars=chars, stream=stream)
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind failed for {shape} at {chars} characters:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="object,int_array,long_string,jsonl_repair",
                        help="comma-separated shapes of bench_stream_large.py (each costs about a minute)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_stream_work needs valgrind (apt-get install valgrind)")
    results = []
    print(f"{'reply':<14}{'size':>7}{'instructions':>16}")
    for shape in args.shapes.split(","):
        work = {}
        for label, chars in SIZES.items():
            work[label] = instructions(shape, chars, True) - instructions(shape, chars, False)
            print(f"{shape:<14}{label:>7}{work[label]:>16,}")
        ratio = work["1MB"] / work["256KB"]
        results.append(Result(f"stream work {shape} ({format_of(shape)})", f"x{ratio:.2f} for 4x the text",
                              f"<= {LINEAR_GOAL}x", ratio <= LINEAR_GOAL))
    report_all(results, args.json)


if __name__ == "__main__":
    main()
