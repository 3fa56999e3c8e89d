#!/usr/bin/env bash
# The whole test suite, with its set-up: installs the pinned agent CLIs (pinned-agents.txt)
# into ganger's cache when they are missing (in parallel), then checks formatting and lints
# and runs every test, the end-to-end and conformance tests against the real agents included,
# then the tasks' end-to-end tests again with task trees on (scripts/test-trees).
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ganger/agents"
name_of() {
  case "$1" in
    opencode-ai) echo opencode ;;
    @anthropic-ai/claude-code) echo claude ;;
    @openai/codex) echo codex ;;
    @google/gemini-cli) echo gemini ;;
    @qwen-code/qwen-code) echo qwen ;;
    *) echo "scripts/test.sh: no adapter name for $1" >&2; return 2 ;;
  esac
}
pids=()
while read -r spec; do
  case "$spec" in ''|'#'*) continue ;; esac
  package=${spec%@*} version=${spec##*@}
  name=$(name_of "$package")
  dir="$cache/$name-$version"
  if [ ! -x "$dir/node_modules/.bin/$name" ]; then
    echo "installing $spec into $dir"
    npm install --no-audit --no-fund --loglevel=error --prefix "$dir" "$spec" &
    pids+=($!)
  fi
done < pinned-agents.txt
# The installs (network and unpacking, mostly) go on while formatting is checked and the tests
# are built; a failed check or build stops them rather than leaving a half install behind.
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
cargo fmt --all --check
# Clippy's lints (-D warnings) run in the test build's compile (scripts/with-lints): the same
# lints over the same targets as `cargo clippy --all-targets`, with one compile instead of two.
# The test build makes the ganger binary the images below are built with (a `cargo build` of
# the binary alone would build it, and its dependencies, a second time: without the tests'
# features).
scripts/with-lints cargo nextest run --workspace --locked --profile "${NEXTEST_PROFILE:-default}" --no-run
# The test build makes no binary of a crate without integration tests: `ganger agents canary`'s
# developer tool is built here, beside ganger, with the same wrapper (so from the same compile),
# not by its test in the middle of the run (which took over its 300 s under load).
scripts/with-lints cargo build --locked -p ganger-dev
for pid in "${pids[@]}"; do wait "$pid"; done
trap - EXIT
while read -r spec; do
  case "$spec" in ''|'#'*) continue ;; esac
  package=${spec%@*} version=${spec##*@}
  name=$(name_of "$package")
  dir="$cache/$name-$version"
  # The installed version, from the package's own package.json: starting the CLIs for their
  # --version took seconds (Gemini CLI and Qwen Code about 1.6 CPU-seconds each), and the tests
  # start each of them anyway.
  installed=$(node -p 'require(process.argv[1]).version' "$dir/node_modules/$package/package.json")
  echo "$name $installed at $dir"
done < pinned-agents.txt
# The docker sandbox's tests need a worker image per agent: built once here, offline (Debian
# packages and the CLIs above; nothing is pulled), and kept by Docker for the next run.
docker_host=${DOCKER_HOST:-}
if [ -S "${docker_host#unix://}" ] || [ -S /var/run/docker.sock ]; then
  "${CARGO_TARGET_DIR:-target}/debug/ganger" image build --agent all
fi
suite=0
scripts/with-lints cargo nextest run --workspace --locked --profile "${NEXTEST_PROFILE:-default}" || suite=$?
# The end-to-end tests of tasks again with task trees on (overlays, reflink copies on an XFS
# image, the pool; docs/trees.md): about 5 minutes more on 2 cores. They run when the suite
# failed too, so that one run shows every failure.
trees=0
scripts/test-trees || trees=$?
[ "$suite" = 0 ] || exit "$suite"
exit "$trees"
