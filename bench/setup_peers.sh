#!/usr/bin/env bash
# Create or update bench/.peers: one venv holding our package (editable, from this repo) beside
# the peers dotpromptz and genkit, so every benchmark compares them under the same interpreter.
# Idempotent: a second run only re-checks. Prints the versions it ended with.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
PEERS=bench/.peers
PY="$PEERS/bin/python"
LOG="$PEERS/setup.log"

quiet() {  # run a pip step, showing its output only if it fails
    if ! "$@" >>"$LOG" 2>&1; then
        echo "setup_peers: failed: $*  (log: $LOG)" >&2
        tail -n 30 "$LOG" >&2
        exit 1
    fi
}

if [ ! -x "$PY" ]; then
    echo "setup_peers: creating $PEERS"
    python3 -m venv "$PEERS"
fi
: >"$LOG"
quiet "$PY" -m pip install -q --disable-pip-version-check dotpromptz genkit
# (pip's output is captured first: `pip show | grep -q` can fail under pipefail when grep exits early)
installed="$("$PY" -m pip show dotprompt-toolkit 2>/dev/null || true)"
if ! grep -qx "Editable project location: $REPO" <<<"$installed"; then
    echo "setup_peers: installing our package (editable) from $REPO"
    quiet "$PY" -m pip install -q --disable-pip-version-check -e "$REPO"
fi

# PyPI's `dotprompt` is another project; it would fight ours for the import name.
if "$PY" -m pip show dotprompt >/dev/null 2>&1; then
    echo "setup_peers: PyPI's 'dotprompt' is installed in $PEERS; remove it: $PY -m pip uninstall dotprompt" >&2
    exit 1
fi

"$PY" - "$REPO" <<'PY'
import importlib.metadata as md
import pathlib
import sys

import dotprompt

ours = pathlib.Path(dotprompt.__file__).resolve().parent
if ours != pathlib.Path(sys.argv[1]) / "dotprompt":
    sys.exit(f"setup_peers: `import dotprompt` finds {ours}, not this repository's package")
for dist in ("dotprompt-toolkit", "dotpromptz", "dotpromptz-handlebars", "genkit"):
    print(f"  {dist:22} {md.version(dist)}")
print(f"  {'python':22} {sys.version.split()[0]} ({sys.executable})")
PY
