#!/usr/bin/env bash
# The fleet worker image (`ganger image build --worker`): its build time and size, for each
# way a build finds the machine. Prints a line per build:
#   cold      --force: the base with git by mmdebstrap, then the agents and ganger
#   base      the base there, the worker image removed: the agents and ganger copied in again
#   upgrade   another ganger binary, the old image there: Docker's cached agent layers reused,
#             only ganger copied in
#   there     the image there: nothing built (the binary hashed, Docker asked)
# The binary is copied first, so that a build of the workspace meanwhile changes nothing. The
# images it made are removed at the end (the base stays: the agents' images and the tests use
# it). The machine is shared and noisy: one run is one sample. WARM=1 leaves out the cold build
# (the base is there already).
#
#   [WARM=1] bench/worker-image.sh [GANGER] [AGENT...]   (defaults: target/debug/ganger, command)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source=$(realpath "${1:-$repo/target/debug/ganger}")
shift || true
[ $# -gt 0 ] || set -- command
agents=()
for agent in "$@"; do agents+=(--agent "$agent"); done
work=$(mktemp -d /tmp/ganger-worker-image.XXXXXX)
ganger=$work/bin/ganger
mkdir "$work/bin" && cp "$source" "$ganger"
made=()
cleanup() {
  for image in "${made[@]}"; do docker image rm "$image" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
build() { # LABEL BINARY [--force]
  local label=$1 binary=$2
  shift 2
  local started ended report
  started=$(date +%s.%N)
  report=$(cd "$work" && "$binary" image build --worker "${agents[@]}" "$@" --json 2>"$work/err") \
    || { cat "$work/err" >&2; exit 1; }
  ended=$(date +%s.%N)
  python3 - "$label" "$started" "$ended" "$report" <<'PY'
import json, sys
label, started, ended, report = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
image = json.loads(report)["images"][0]
print(f"{label:<8} {ended - started:7.1f} s  {image['size'] / 1e6:6.0f} MB  built={image['built']} "
      f"base_built={image['base_built']}  {image['image']}")
PY
  image=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["images"][0]["image"])' "$report")
  made+=("$image")
}
echo "agents: $*; ganger: $source ($(stat -c %s "$ganger") bytes)"
if [ "${WARM:-0}" = 1 ]; then build base "$ganger"; else build cold "$ganger" --force; fi
build there "$ganger"
docker image rm "${made[-1]}" >/dev/null
build base "$ganger"
cp "$ganger" "$work/upgraded" && printf '\0' >>"$work/upgraded"
build upgrade "$work/upgraded"
