#!/usr/bin/env bash
# The test suite's fixed part, the lints and the test build, from scratch, for two or more
# commits side by side: each is cloned once, then, round after round and in turn, its target
# dir is emptied and the lints and test build that commit's scripts/test.sh runs are timed:
#   cargo clippy --workspace --all-targets --locked -- -D warnings
#   cargo nextest run --workspace --locked --profile ci --no-run
# or, in a commit that has scripts/with-lints, the lints inside the test build's compile:
#   scripts/with-lints cargo nextest run --workspace --locked --profile ci --no-run
# (its clippy column is then 0). Prints a line per build and the medians per commit. It runs
# with the caller's environment (.ci/run sets CARGO_INCREMENTAL=0). The machine is shared and
# noisy: compare commits within one run.
#
#   bench/build-time.sh [--runs N] REV REV...
set -euo pipefail
runs=2
if [ "${1:-}" = --runs ]; then runs=$2; shift 2; fi
[ $# -ge 2 ] || { echo "usage: bench/build-time.sh [--runs N] REV REV..." >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/ganger-build-time.XXXXXX)
trap 'rm -rf "$work"' EXIT
for rev in "$@"; do
  git -C "$repo" rev-parse --verify --quiet "$rev^{commit}" >/dev/null \
    || { echo "bench/build-time.sh: $rev names no commit" >&2; exit 2; }
  git clone -q "$repo" "$work/$rev"
  git -C "$work/$rev" checkout -q "$rev"
done
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
results=$work/results
for _ in $(seq "$runs"); do
  for rev in "$@"; do
    cd "$work/$rev"
    rm -rf target
    start=$(date +%s.%N)
    if [ -x scripts/with-lints ]; then
      middle=$start
      scripts/with-lints cargo nextest run --workspace --locked --profile ci --no-run >/dev/null 2>&1
    else
      cargo clippy --workspace --all-targets --locked -q -- -D warnings >/dev/null 2>&1
      middle=$(date +%s.%N)
      cargo nextest run --workspace --locked --profile ci --no-run >/dev/null 2>&1
    fi
    end=$(date +%s.%N)
    line="$rev clippy $(seconds "$start" "$middle") build $(seconds "$middle" "$end")"
    echo "$line"
    echo "$line" >> "$results"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    rev, _, clippy, _, build = line.split()
    by.setdefault(rev, []).append((float(clippy), float(build)))
print(f"{'commit':<14} {'clippy':>8} {'build':>8} {'both':>8}   (medians)")
for rev, rows in by.items():
    clippy = statistics.median(r[0] for r in rows)
    build = statistics.median(r[1] for r in rows)
    both = statistics.median(r[0] + r[1] for r in rows)
    print(f"{rev:<14} {clippy:8.1f} {build:8.1f} {both:8.1f}")
PY
