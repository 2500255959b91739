#!/usr/bin/env bash
# The Python package (python/): builds its wheel with maturin (dev profile, in the workspace's
# target directory, so polars is the one cargo already built), installs it with the pinned
# packages of requirements.txt into a venv under the target directory, and runs pytest
# (python/tests: the package against the CLI binary). Run by scripts/test-all.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
venv="$target/py-venv"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements.txt

# The CLI the tests compare with, as `cargo test --workspace` builds it (scripts/test-all.sh ran it
# already: a no-op there; another selection of packages would build polars with other features).
cargo test -q --workspace --no-run

# maturin builds the extension alone: each shared dependency must get the features the workspace
# gives it, else polars is built a second time (python/Cargo.toml, "Feature unification").
features() {
  cargo tree -e normal,build "$@" -f '{p} [{f}]' --prefix none | sed 's/ (\*)$//' | sort -u
}
differ=$(comm -13 <(features --workspace -e dev) \
  <(features -p sctp-analyzer-py --features pyo3/extension-module) | grep -v '^pyo3' || true)
if [ -n "$differ" ]; then
  echo "python/Cargo.toml: these dependencies get other features than in the workspace (add them" >&2
  echo "to its feature unification block with the workspace's features):" >&2
  echo "$differ" >&2
  exit 1
fi

wheels="$target/wheels"
rm -f "$wheels"/sctp_analyzer-*.whl
start=$SECONDS
CARGO_TARGET_DIR="$target" "$venv/bin/maturin" build -q --profile dev \
  --manifest-path python/Cargo.toml --interpreter "$venv/bin/python" --out "$wheels"
echo "wheel built in $((SECONDS - start)) s: $(ls "$wheels"/sctp_analyzer-*.whl)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
  "$wheels"/sctp_analyzer-*.whl

# The stubs and annotations, strictly.
(cd python && "$venv/bin/mypy" --strict --cache-dir "$target/mypy-cache" sctp_analyzer tests)

# From outside the source tree, so that the installed wheel is what is imported.
cd python/tests
SCTP_ANALYZER_BIN="$target/debug/sctp-analyzer" "$venv/bin/python" -m pytest -q -p no:cacheprovider .
