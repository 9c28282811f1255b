#!/usr/bin/env bash
# The package as a user's pip installs it: the sdist and the wheel built from it (python -m build),
# the wheel checked to hold every tracked file of the package's folders, installed into a new venv
# outside the checkout (constraints.txt keeps torch's CPU build and the tested numba) and used from
# a folder outside the checkout, where nothing of the checkout can be imported by mistake.
# Usage: .ci/wheel_smoke.sh [PYTHON]   PYTHON has `build` (the dev extra); default .venv/bin/python
set -euo pipefail
cd "$(dirname "$0")/.."
unset PYTHONPATH PYTHONDONTWRITEBYTECODE  # no path into a checkout; bytecode written at first import (--no-compile), as make does
checkout=$PWD
python=${1:-.venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/tablegym-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
case "$work/" in "$checkout"/*) echo "wheel_smoke: $work is inside the checkout" >&2; exit 1 ;; esac
start=$SECONDS

"$python" -m build --outdir "$work/dist" . > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
wheel=$(echo "$work"/dist/*.whl)
"$python" .ci/wheel_smoke.py contents "$wheel"
built=$SECONDS

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet --no-compile -c "$checkout/constraints.txt" "$wheel"
installed=$SECONDS

mkdir "$work/outside"
cp .ci/wheel_smoke.py "$work/outside/"
(cd "$work/outside" && "$work/venv/bin/python" wheel_smoke.py run)
echo "wheel smoke: $(basename "$wheel") passed in $((SECONDS - start)) s (build $((built - start)) s," \
     "install $((installed - built)) s, smoke $((SECONDS - installed)) s)"
