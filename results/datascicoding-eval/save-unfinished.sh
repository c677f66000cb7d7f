#!/bin/bash
# Keeps the digits queue's started but unfinished runs (stopped first, e.g. with Ctrl-C or
# SIGINT, which saves a checkpoint) in results/datascicoding-eval/digits-unfinished/: each
# comparison folder with its run's files and only the latest checkpoint. To continue them:
#   mkdir -p runs/eval-digits-q && cp -r results/datascicoding-eval/digits-unfinished/* runs/eval-digits-q/
#   then start the lanes of digits-queue.sh (they resume what they find).
set -eu
cd "$(dirname "$0")/../.."
src=${SRC:-runs/eval-digits-q}
dest=${DEST:-results/datascicoding-eval/digits-unfinished}
rm -rf $dest.tmp && mkdir -p $dest.tmp
for cdir in "$src"/*/compare-*; do
  [ -d "$cdir" ] || continue
  name=$(basename "$(dirname "$cdir")")
  if ls "$cdir"/*/eval.json >/dev/null 2>&1; then echo "$name: finished, not kept here"; continue; fi
  if ls "$cdir"/*/run.lock >/dev/null 2>&1; then
    for lock in "$cdir"/*/run.lock; do
      pid=$(grep -o '[0-9]\+' "$lock" | head -1 || true)
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$name: still running (pid $pid); stop it first" >&2; exit 1; fi
    done
  fi
  out=$dest.tmp/$name/$(basename "$cdir")
  mkdir -p "$out"
  cp "$cdir"/*.json "$out"/ 2>/dev/null || true
  for run in "$cdir"/*/; do
    r=$(basename "$run")
    mkdir -p "$out/$r/checkpoints"
    find "$run" -maxdepth 1 -type f ! -name run.lock -exec cp {} "$out/$r/" \;
    latest=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$run/checkpoints/latest.json','utf8')).name ?? '')")
    cp "$run/checkpoints/latest.json" "$out/$r/checkpoints/"
    cp -r "$run/checkpoints/$latest" "$out/$r/checkpoints/"
    echo "$name: kept at $(basename "$latest") ($(wc -l < "$run/metrics.jsonl") iterations)"
  done
done
rm -rf $dest && mv $dest.tmp $dest
