#!/usr/bin/env bash
# A tour of the `noteskit` command line on a throwaway store: each command is printed, then run.
# Usage: examples/cli_tour.sh [path/to/noteskit]   (default: the one on the PATH)
set -euo pipefail
NOTESKIT=${1:-noteskit}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
DB=$TMP/tour.db
trap 'rm -rf "$TMP"' EXIT

run() {
  local shown=() word
  for word in "$@"; do [[ $word =~ [[:space:]] ]] && shown+=("\"$word\"") || shown+=("$word"); done
  printf '\n$ noteskit %s\n' "${shown[*]/#$TMP/\$TMP}"
  "$NOTESKIT" --db "$DB" "$@"
}

run import "$HERE/data/sample.json"
run list --limit 5
run add --title "周末" --content "今天天气真好，去公园散步。"
run edit 29 --content "今天下雨了。"
run show 29
run chat history Alice --limit 4
run chat send Alice "到了，在检票口等你。"
run heights --limit 5 --width 320
run render "$TMP/alice.png" --conversation Alice
run export "$TMP/backup.jsonl"
run doctor                       # the store and its -wal/-shm are readable by their owner only
run delete 29
printf '\n$ noteskit add --title "   " --content x    # a mistake: a message and exit status 1, no traceback\n'
"$NOTESKIT" --db "$DB" add --title "   " --content x || echo "(exit status $?)"
