#!/usr/bin/env bash
# A tour of the `noteskit` command line on a throwaway store: each command is printed, then run.
# Usage: examples/cli_tour.sh [path/to/noteskit]   (default: the one on the PATH)
set -euo pipefail
NOTESKIT=${1:-noteskit}
DB=$(mktemp -d)/tour.db
trap 'rm -rf "$(dirname "$DB")"' EXIT

run() {
  local shown=() word
  for word in "$@"; do [[ $word =~ [[:space:]] ]] && shown+=("\"$word\"") || shown+=("$word"); done
  printf '\n$ noteskit %s\n' "${shown[*]}"
  "$NOTESKIT" --db "$DB" "$@"
}

run add --title "周末" --content "今天天气真好，去公园散步。"
run add --content "A note without a title is titled with today's date."
run list
run edit 1 --content "今天下雨了。"
run show 1
run delete 2
run chat send Alice "周末有空吗？"
run chat receive Alice "Saturday afternoon, yes. Where shall we meet?"
run chat history Alice
run heights --width 320
run render "$(dirname "$DB")/alice.png" --conversation Alice
printf '\n$ noteskit add --title "   " --content x    # a mistake: a message and exit status 1, no traceback\n'
"$NOTESKIT" --db "$DB" add --title "   " --content x || echo "(exit status $?)"
