#!/usr/bin/env bash
# A stand-in for `opencode` in ganger's fast tests: the command-line surface ganger uses
# (--version, models, run --format json --title T | --session S [--model M], the prompt on
# stdin) and OpenCode-shaped JSON events, with behaviour chosen by the prompt:
#   sleep N        sleep N seconds silently before finishing
#   busy N         burn CPU silently for N seconds, then finish
#   detach-child   leave a child running in a new session, then finish
#   silent-exit    exit 0 without printing anything
#   garbage        print lines that are not events among the real ones
#   fail           print an error event and exit 1
#   anything else  finish normally
# Every run appends the prompt's first line to $PWD/fake.txt (OpenCode works in $PWD).
# The interactive form (`opencode --session S [--model M]`, what `ganger attach` opens) writes
# "attached S M" to $PWD/attach.txt and its environment to $PWD/attach-env.txt, then appends
# each line typed on stdin to fake.txt.
set -u
case "${1:-}" in
  --version) echo 1.18.33; exit 0 ;;
  models) printf 'opencode/big-pickle\nmock/scripted\nmock/other\n'; exit 0 ;;
  run) shift ;;
  --session)
    printf 'attached %s %s\n' "$2" "${4:-}" >> "$PWD/attach.txt"
    env > "$PWD/attach-env.txt"
    while IFS= read -r line; do printf 'by hand: %s\n' "$line" >> "$PWD/fake.txt"; done
    exit 0 ;;
  *) echo "fake opencode: unknown command ${1:-}" >&2; exit 2 ;;
esac
session="" title=""
while [ $# -gt 0 ]; do
  case "$1" in
    --format) shift 2 ;;
    --session) session=$2; shift 2 ;;
    --title) title=$2; shift 2 ;;
    --model|-m) shift 2 ;;
    *) echo "fake opencode: unexpected argument $1" >&2; exit 2 ;;
  esac
done
prompt=$(cat)
[ -n "$session" ] || session="ses_fake${RANDOM}${RANDOM}"
now() { local t=${EPOCHREALTIME/./}; echo "${t:0:13}"; }
event() { printf '{"type":"%s","timestamp":%s,"sessionID":"%s","part":%s}\n' "$1" "$(now)" "$session" "$2"; }
finish() {
  event step_finish '{"type":"step-finish","reason":"stop","tokens":{"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.001}'
}
first=${prompt%%$'\n'*}
case "$first" in
  silent-exit) exit 0 ;;
esac
event step_start '{"type":"step-start"}'
printf '%s\n' "$first" >> "$PWD/fake.txt"
event tool_use '{"type":"tool","tool":"edit","callID":"call_1","state":{"status":"completed","input":{"filePath":"fake.txt"},"output":"ok","title":"fake.txt"}}'
event step_finish '{"type":"step-finish","reason":"tool-calls","tokens":{"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.001}'
event step_start '{"type":"step-start"}'
case "$first" in
  "sleep "*) sleep "${first#sleep }" ;;
  "busy "*) end=$((SECONDS + ${first#busy })); while [ "$SECONDS" -lt "$end" ]; do :; done ;;
  detach-child) setsid sleep 300 </dev/null >/dev/null 2>&1 & ;;
  garbage) echo "this is not JSON"; echo '{"type":"mystery","sessionID":"'"$session"'"}' ;;
  fail)
    printf '{"type":"error","timestamp":%s,"sessionID":"%s","error":{"name":"APIError","data":{"message":"fake failure","statusCode":500,"isRetryable":true}}}\n' "$(now)" "$session"
    echo "Error: fake failure" >&2
    exit 1 ;;
esac
event text "{\"type\":\"text\",\"text\":\"Done: ${first//\"/} (title ${title:-none})\"}"
finish
