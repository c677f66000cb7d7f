#!/usr/bin/env bash
# Trains the runs of "The critic that BAD needs" (docs/results.md) in the protocol's order, each
# comparison with the protocol's own command, and keeps them in results/critic-study/ as it goes,
# so that the work can stop and continue on any machine:
#
#   apps/compare/scripts/critic-study-runs.sh train TREE   # continue from results/critic-study/, then train
#   apps/compare/scripts/critic-study-runs.sh save TREE    # results/critic-study/ ← what TREE/runs holds
#
# TREE is a checkout of the protocol's commit (git worktree add TREE bd832cd; npm ci there): the
# runs train on that code, in TREE/runs/critic-study. `train` first unpacks whatever
# results/critic-study/ holds that TREE/runs lacks and resumes. Stop it with SIGTERM to its process
# group (the runs save a checkpoint and stop), then `save`: each comparison's archive with its
# finished runs. A run cut off resumes from its checkpoint in TREE (runs are deterministic, so it
# ends as an uninterrupted one); on another machine it trains again from its start, since its
# checkpoints (some 11 MB each) are not worth keeping in results/.
#
# The comparisons, one folder each (its archive in results/critic-study/ has that name + .zip):
#   tuning/<task>/setting-<i>   part 1, POAD with setting i's flags, seeds 101–105
#   part2/<task>/<arm>          part 2, one arm, seeds 41–50
#   part3/<arm>                 part 3, food-preparation, seeds 41–70
# Two lanes take them in that order, each the next one no lane has taken, so that neither core
# waits while a comparison's odd seed trains alone. A POAD-critic comparison waits until the
# tuning's rule has chosen its flags (critic-study-tables.ts choose); part 1 comes first, so it
# waits only where part 1's runs are not all in.
set -euo pipefail
# The whole script is one block, read before any of it runs: editing the file while it runs (for
# hours) cannot change what it does.
{
mode=${1:?usage: critic-study-runs.sh train|save TREE}
tree=$(realpath "${2:?usage: critic-study-runs.sh train|save TREE}")
here=$(cd "$(dirname "$0")/../../.." && pwd)
results=$here/results/critic-study
protocol=bd832cd
if [[ "$(git -C "$tree" rev-parse HEAD)" != "$protocol"* ]]; then
  echo "error: $tree is not at the protocol's commit $protocol; create it with: git worktree add $tree $protocol" >&2
  exit 2
fi
runs=$tree/runs/critic-study
tasks=(key-token delayed loop)
# Part 1's settings' flags, by number: critic-study-tables.ts TUNING_SETTINGS (docs/results.md's table).
mapfile -t settings < <(cd "$here" && node --import tsx apps/compare/scripts/critic-study-tables.ts settings)
[ "${#settings[@]}" -gt 0 ] || { echo "error: critic-study-tables.ts settings printed no settings" >&2; exit 1; }

# Every comparison, in the order the lanes take them.
cells=()
for i in "${!settings[@]}"; do
  for task in "${tasks[@]}"; do cells+=("tuning/$task/setting-$i"); done
done
for task in "${tasks[@]}"; do
  for arm in poad-oracle poad grpo gigpo twosome-labels poad-critic; do cells+=("part2/$task/$arm"); done
done
cells+=(part3/twosome part3/poad-critic)

# compare writes a comparison into a new folder compare-<env>-<time> of its --out; the study keeps
# it at the cell's own path, DIR/comparison.
named() { # cell folder
  local made=("$1"/compare-*)
  if [ ! -e "$1/comparison" ] && [ -e "${made[0]}" ]; then
    [ "${#made[@]}" = 1 ] || { echo "error: more than one comparison in $1" >&2; exit 1; }
    mv "${made[0]}" "$1/comparison"
  fi
}

if [ "$mode" = save ]; then
  # A run still training may replace its checkpoint while the archive reads it: stop first.
  while IFS= read -r lock; do
    pid=$(grep -o '"pid":[0-9]*' "$lock" | cut -d: -f2)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      echo "error: $(dirname "$lock") is training (pid $pid); stop the study first (SIGTERM to the process group of critic-study-runs.sh train), then save" >&2
      exit 2
    fi
  done < <(find "$runs" -name run.lock 2>/dev/null)
  for cell in "${cells[@]}"; do
    named "$runs/$cell"
    [ -f "$runs/$cell/comparison/compare.json" ] || continue
    # The archive is written aside and renamed into place; the way on is this script's train.
    (cd "$here" && node --import tsx apps/compare/src/archive.ts "$runs/$cell/comparison" \
      "$results/$cell.zip")
  done
  exit 0
fi
[ "$mode" = train ] || { echo "error: mode $mode: use train or save" >&2; exit 2; }

cd "$tree"
# Continue from results/critic-study/ where TREE/runs lacks a comparison: its archive unpacked.
for cell in "${cells[@]}"; do
  if [ ! -d "$runs/$cell/comparison" ] && [ -f "$results/$cell.zip" ]; then
    mkdir -p "$runs/$cell"
    (cd "$here" && node --import tsx apps/compare/src/archive.ts --unpack "$results/$cell.zip" \
      "$runs/$cell/comparison")
  fi
done
npx turbo run build --filter=@poad/compare... --output-logs=errors-only

# The flags of the comparison CELL, printed; fails while POAD-critic is not chosen yet.
flags_of() { # cell
  case $1 in
    tuning/*) echo "${settings[${1##*setting-}]}" ;;
    */poad-oracle) echo "--critic oracle" ;;
    */twosome-labels) echo "--token-space labels" ;;
    */poad-critic)
      (cd "$here" && node --import tsx apps/compare/scripts/critic-study-tables.ts choose "$runs/tuning") ;;
    *) echo "" ;;
  esac
}
algo_of() { # cell
  case ${1##*/} in
    grpo | gigpo) echo "${1##*/}" ;;
    twosome*) echo twosome ;;
    *) echo poad ;;
  esac
}

# One comparison with the protocol's command: resumed if its folder is there, else started.
train_cell() { # cell
  local cell=$1 dir=$runs/$1 flags env seeds
  named "$dir"
  if [ -f "$dir/comparison/compare.json" ]; then
    [ -f "$dir/comparison/report.md" ] && return 0
    node --import tsx apps/compare/src/main.ts --resume "$dir/comparison" --jobs 2
    return
  fi
  while ! flags=$(flags_of "$cell" 2>/dev/null); do sleep 60; done
  case $cell in
    tuning/*) env=credit/$(basename "$(dirname "$cell")") seeds=(--first-seed 101 --seeds 5) ;;
    part2/*) env=credit/$(basename "$(dirname "$cell")") seeds=(--first-seed 41 --seeds 10) ;;
    part3/*) env=virtualhome/food-preparation seeds=(--first-seed 41 --seeds 30) ;;
  esac
  mkdir -p "$dir"
  node --import tsx apps/compare/src/main.ts --env "$env" --algos "$(algo_of "$cell")" \
    "${seeds[@]}" --eval-episodes 20 --jobs 2 ${flags:+--extra="$flags"} --out "$dir"
  named "$dir"
}

# A lane takes each comparison no lane has taken yet (mkdir is atomic), in the order above.
locks=$(mktemp -d)
lane() { # number
  local cell
  for cell in "${cells[@]}"; do
    mkdir -p "$locks/$(dirname "$cell")"
    mkdir "$locks/$cell" 2>/dev/null || continue
    echo "lane $1: $cell"
    train_cell "$cell"
  done
}
lane 1 &
one=$!
lane 2 &
two=$!
rc=0
wait "$one" || rc=$?
wait "$two" || rc=$?
[ "$rc" = 0 ] || exit "$rc"
echo "all the critic study's runs are in"
exit
}
