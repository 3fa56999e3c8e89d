#!/usr/bin/env bash
# The whole test suite, with its set-up: installs the pinned agent CLIs (pinned-agents.txt)
# into ganger's cache when they are missing, then checks formatting and lints and runs every
# test, the end-to-end tests against the real agents included.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ganger/agents"
while read -r spec; do
  case "$spec" in ''|'#'*) continue ;; esac
  package=${spec%@*} version=${spec##*@}
  case "$package" in
    opencode-ai) name=opencode ;;
    *) echo "scripts/test.sh: no adapter name for $package" >&2; exit 2 ;;
  esac
  dir="$cache/$name-$version"
  if [ ! -x "$dir/node_modules/.bin/$name" ]; then
    echo "installing $spec into $dir"
    npm install --no-audit --no-fund --loglevel=error --prefix "$dir" "$spec"
  fi
  echo "$name $("$dir/node_modules/.bin/$name" --version) at $dir"
done < pinned-agents.txt
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo nextest run --workspace --locked --profile "${NEXTEST_PROFILE:-default}"
