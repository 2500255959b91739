#!/usr/bin/env bash
# Runs every test of the project, installing what the tests need first (Debian packages).
# Used by .ci/run and by developers: `scripts/test-all.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v tshark >/dev/null 2>&1 || need_apt+=(tshark)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
# GNU time: the broken-input tests measure the CLI's peak RSS through it.
[ -x /usr/bin/time ] || need_apt+=(time)
# The Python package's tests run in a venv (python/run-tests.sh): Debian's python3 needs its venv.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "missing packages: ${need_apt[*]} (install them as root)" >&2
  fi
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test (unit, integration, snapshot)"
cargo test --workspace --no-fail-fast
echo "== broken-input corpus is what generate.py writes"
python3 sample-traces/broken/generate.py
# (.gz files excluded: their bytes depend on the zlib version; the test reads the committed ones.)
if git rev-parse --git-dir >/dev/null 2>&1; then
  git diff --exit-code --stat -- sample-traces/broken/ ':!*.gz' \
    || { echo "sample-traces/broken/ is stale: run generate.py and commit"; exit 1; }
fi
echo "== fuzz: each target ${FUZZ_SECONDS:-45} s, fails on a crash (fuzz/README.md)"
fuzz/run.sh "${FUZZ_SECONDS:-45}"
echo "== Python package: wheel (maturin), stubs (mypy), pytest against the CLI (python/run-tests.sh)"
python/run-tests.sh
echo "== dashboard load and fault tests (dashboard/load-tests/run.sh)"
dashboard/load-tests/run.sh
# Advisories are not checked: the RustSec database is a git repository on GitHub, which this
# project's machines and CI cannot reach (only package registries are); see deny.toml.
echo "== cargo deny: licences, bans, sources"
command -v cargo-deny >/dev/null 2>&1 || cargo install cargo-deny --locked
cargo deny --all-features check --hide-inclusion-graph licenses bans sources
if [ -x dashboard/browser-tests/run.sh ]; then
  echo "== browser tests (headless Chromium)"
  dashboard/browser-tests/run.sh
fi
echo "== reviewer's lab scoring (informational; the gate is analyzer/tests/lab_truth.rs)"
if [ -f ../shared/captures/lab/dev-list.txt ] && [ -f ../shared/lab/score_lab.py ]; then
  cargo test -q --workspace --no-run
  # ctrl_ibit_pmr1_rtomin30_d5 expects the configured 200 ms SACK delay, but the I-bit makes
  # every SACK immediate there (the delayed-SACK timer never fired): it cannot be measured.
  python3 ../shared/lab/score_lab.py "${CARGO_TARGET_DIR:-target}/debug/sctp-analyzer" ../shared/captures/lab/dev-list.txt \
    || echo "score_lab: see the FAIL lines above"
else
  echo "../shared absent: lab scoring skipped"
fi
