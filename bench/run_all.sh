#!/usr/bin/env bash
# Set up bench/.peers, run every benchmark under its interpreter, then print one summary table.
# BENCH_STRICT=1 makes a missed target fail the script (exit 1); by default only a crash does.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=bench/.peers/bin/python
RESULTS="$(mktemp -d)"
trap 'rm -rf "$RESULTS"' EXIT

echo "== setup: bench/.peers"
bash bench/setup_peers.sh

BENCHES=(render import check stream loop provider batch replay)
failed=0
for bench in "${BENCHES[@]}"; do
    echo
    echo "== bench_$bench.py"
    if ! "$PY" "bench/bench_$bench.py" --json "$RESULTS/$bench.json"; then
        echo "bench_$bench.py FAILED" >&2
        failed=1
    fi
done
echo
echo "== bench_render.py --engine handlebars"
if ! "$PY" bench/bench_render.py --engine handlebars --json "$RESULTS/render-handlebars.json"; then
    echo "bench_render.py --engine handlebars FAILED" >&2
    failed=1
fi

echo
echo "== summary ($(nproc) cores)"
strict=()
if [ "${BENCH_STRICT:-0}" = 1 ]; then strict=(--strict); fi
results=()
for bench in "${BENCHES[@]}" render-handlebars; do
    if [ -f "$RESULTS/$bench.json" ]; then results+=("$RESULTS/$bench.json"); fi
done
if [ ${#results[@]} -eq 0 ]; then
    echo "no benchmark produced a result" >&2
    exit 1
fi
"$PY" bench/summary.py "${strict[@]}" "${results[@]}" || failed=1
exit "$failed"
