#!/usr/bin/env bash
# Trains the runs of "Settling the open results" (docs/results.md) in the protocols' order, each
# with the protocol's own command, and keeps them in results/settle/ as it goes, so that the work
# can stop and continue on any machine:
#
#   apps/compare/scripts/settle-runs.sh train TREE   # continue from results/settle/, then train
#   apps/compare/scripts/settle-runs.sh save TREE    # results/settle/ ← what TREE/runs holds
#
# TREE is a checkout of the protocols' commit (git worktree add TREE acbbaa1; npm ci there): the
# runs train on that code, in TREE/runs. `train` first unpacks whatever results/settle/ holds
# that TREE/runs lacks, finished runs and cut-off runs with their latest checkpoint, and resumes
# (runs are deterministic, so a run continued from its checkpoint ends as an uninterrupted one).
# Stop it with SIGTERM to its process group (the runs save a checkpoint and stop), then `save`:
# each comparison's archive, finished runs without checkpoints, unfinished ones with their latest
# checkpoint only (npm run archive -w @poad/compare -- DIR DEST.zip --unfinished, from this
# checkout), and the held-out reports gzipped, as results/ keeps them (results/README.md).
set -euo pipefail
# The whole script is one block, read before any of it runs: editing the file while it runs (for
# hours) cannot change what it does.
{
mode=${1:?usage: settle-runs.sh train|save TREE}
tree=$(realpath "${2:?usage: settle-runs.sh train|save TREE}")
here=$(cd "$(dirname "$0")/../../.." && pwd)
results=$here/results/settle
protocol=acbbaa1
if [[ "$(git -C "$tree" rev-parse HEAD)" != "$protocol"* ]]; then
  echo "error: $tree is not at the protocols' commit $protocol; create it with: git worktree add $tree $protocol" >&2
  exit 2
fi

# Comparison folder in TREE/runs ↔ its archive in results/settle/ (that name with .zip).
pairs=(
  "settle-poad-twosome/poad-twosome-30:poad-twosome-30"
  "settle-etpo/A/etpo-A:etpo/A"
  "settle-etpo/B/etpo-B:etpo/B"
  "settle-etpo/C/etpo-C:etpo/C"
  "settle-etpo/D/etpo-D:etpo/D"
  "settle-etpo/E/etpo-E:etpo/E"
  "settle-heldout/kiln_batches/heldout-kiln_batches:heldout/kiln_batches"
  "settle-heldout/ferry_crossings/heldout-ferry_crossings:heldout/ferry_crossings"
)

# compare names a new folder after the environment and the time (compare-<env>-<time>); this
# script gives each its fixed name, also when it was stopped before it could.
named() { # folder
  local made=("$(dirname "$1")"/compare-*)
  if [ ! -e "$1" ] && [ -e "${made[0]}" ]; then
    [ "${#made[@]}" = 1 ] || { echo "error: more than one comparison in $(dirname "$1")" >&2; exit 1; }
    mv "${made[0]}" "$1"
  fi
}

if [ "$mode" = save ]; then
  for p in "${pairs[@]}"; do
    run=$tree/runs/${p%%:*} dest=$results/${p#*:}.zip
    named "$run"
    [ -f "$run/compare.json" ] || continue
    # The archive is written aside and renamed into place. The way on from here is this
    # script's train, not compare --resume on the archive.
    (cd "$here" && node --import tsx apps/compare/src/archive.ts "$run" "$dest" --unfinished) |
      sed -e "s|npm run compare -- --resume [^)]*|$0 train $tree|"
  done
  # The ETPO arms' combined report (it trains nothing): its archive.
  for c in "$tree"/runs/settle-etpo/combined/combined-*/; do
    [ -f "$c/combine.json" ] || continue
    (cd "$here" && node --import tsx apps/compare/src/archive.ts "${c%/}" \
      "$results/etpo/combined/$(basename "$c").zip")
  done
  # The prior samplings and held-out scorings, gzipped (each written aside, then renamed).
  for f in "$tree"/runs/settle-heldout/*.json; do
    [ -f "$f" ] || continue
    out=$results/heldout/$(basename "$f").gz
    mkdir -p "$results/heldout" && gzip -9nc "$f" > "$out.tmp" && mv "$out.tmp" "$out"
  done
  exit 0
fi
[ "$mode" = train ] || { echo "error: mode $mode: use train or save" >&2; exit 2; }

cd "$tree"
# Continue from results/settle/ where TREE/runs lacks a comparison: its archive unpacked.
for p in "${pairs[@]}"; do
  run=runs/${p%%:*} dest=$results/${p#*:}.zip
  if [ ! -d "$run" ] && [ -f "$dest" ]; then
    mkdir -p "$(dirname "$run")"
    (cd "$here" && node --import tsx apps/compare/src/archive.ts --unpack "$dest" "$tree/$run")
  fi
done
for f in "$results"/heldout/prior-*.json.gz "$results"/heldout/heldout-*.json.gz; do
  name=$(basename "$f" .gz)
  [ -f "$f" ] && [ ! -f "runs/settle-heldout/$name" ] && mkdir -p runs/settle-heldout &&
    gunzip -c "$f" > "runs/settle-heldout/$name.tmp" && mv "runs/settle-heldout/$name.tmp" "runs/settle-heldout/$name"
done

# Every run trains with one native-kernel thread (each run records it in its config.json), two
# at a time: the confirmatory comparison and each held-out dataset's five seeds as compare
# --jobs 2 runs them, the ETPO arms in two lanes of one run each, which take the arms in turn,
# so that no core waits while an arm's third seed trains alone.
export POAD_NATIVE_THREADS=1
npx turbo run build --filter=@poad/compare... --filter=@poad/train-datascicoding... \
  --output-logs=errors-only

# One comparison with --jobs N (1: one run at a time, in this process): resumed if its folder is
# there, else started under that name.
compare() { # jobs, folder, options…
  local jobs=$1 dir=$2
  shift 2
  named "$dir"
  if [ -f "$dir/compare.json" ]; then
    node --import tsx apps/compare/src/main.ts --resume "$dir" --jobs "$jobs"
  else
    node --import tsx apps/compare/src/main.ts "$@" --jobs "$jobs" --out "$(dirname "$dir")"
    named "$dir"
  fi
}

# Confirmatory: POAD against TWOSOME on seeds 11–40; once its 60 runs are in it is left alone,
# since resuming it would write its report again over the one results/ keeps.
confirmatory=runs/settle-poad-twosome/poad-twosome-30
finished=("$confirmatory"/*/eval.json)
[ -e "${finished[0]}" ] && [ "${#finished[@]}" = 60 ] ||
  compare 2 "$confirmatory" --env virtualhome/food-preparation \
    --algos poad,twosome --first-seed 11 --seeds 30 --eval-episodes 20

# One ETPO arm (seeds 1–3), a comparison of the lanes.
arm() { # A…E
  local extra=
  case $1 in
    B) extra="--critic-scale 0.0667" ;;
    C) extra="--policy-loss released" ;;
    D) extra="--policy-loss released --critic-scale 0.0667" ;;
    E) extra="--policy-loss released --beta 0.01" ;;
  esac
  compare 1 "runs/settle-etpo/$1/etpo-$1" --env virtualhome/food-preparation --algos etpo \
    --seeds 3 --eval-episodes 20 ${extra:+--extra="$extra"}
}
# Two lanes at once: FUNCTION A and FUNCTION B in the background; fails if either failed.
lanes() { # function, a, b
  local one two rc=0
  "$1" "$2" &
  one=$!
  "$1" "$3" &
  two=$!
  wait "$one" || rc=$?
  wait "$two" || rc=$?
  [ "$rc" = 0 ] || exit "$rc"
}
# A lane takes each arm no lane has taken yet (mkdir is atomic), in this order.
locks=$(mktemp -d)
lane() { # number
  for it in A B C D E; do
    mkdir "$locks/$it" 2>/dev/null || continue
    echo "lane $1: $it"
    arm "$it"
  done
}
lanes lane 1 2

# POAD on each held-out dataset, seeds 21–25.
for ds in kiln_batches ferry_crossings; do
  compare 2 "runs/settle-heldout/$ds/heldout-$ds" --env "datascicoding/$ds" --algos poad \
    --first-seed 21 --seeds 5 --eval-episodes 4 --extra="--timeout 60"
done

[ -d runs/settle-etpo/combined ] || npm run compare -- --out runs/settle-etpo/combined --combine \
  runs/settle-etpo/A/etpo-A,runs/settle-etpo/B/etpo-B,runs/settle-etpo/C/etpo-C,runs/settle-etpo/D/etpo-D,runs/settle-etpo/E/etpo-E

# One dataset's prior programs (seeds 21–25), then its held-out scoring against each of them,
# logged to runs/settle-heldout/scored-DATASET.log; the two datasets in two lanes. Each report is
# written under a temporary name and renamed once complete, so a report that is there is finished.
scored() { # dataset
  local ds=$1 seed out dirs=() runs
  exec > "runs/settle-heldout/scored-$ds.log" 2>&1
  for seed in 21 22 23 24 25; do
    out=runs/settle-heldout/prior-$ds-$seed.json
    [ -f "$out" ] && continue
    npm run prior -w @poad/train-datascicoding -- --datasets "$ds" --samples 256 \
      --seed "$seed" --timeout 60 --out "$PWD/$out.tmp"
    mv "$out.tmp" "$out"
  done
  for d in "$PWD/runs/settle-heldout/$ds/heldout-$ds"/poad-s*/; do dirs+=("${d%/}"); done
  runs=$(IFS=,; echo "${dirs[*]}")
  for seed in 21 22 23 24 25; do
    out=runs/settle-heldout/heldout-$ds-$seed.json
    [ -f "$out" ] && continue
    npm run heldout -w @poad/train-datascicoding -- --dataset "$ds" \
      --runs "$runs" --prior "$PWD/runs/settle-heldout/prior-$ds-$seed.json" \
      --last-iterations 8 --k-max 256 --timeout 60 --out "$PWD/$out.tmp"
    mv "$out.tmp" "$out"
  done
}
lanes scored kiln_batches ferry_crossings
unset POAD_NATIVE_THREADS
echo "all settling runs are in"
exit
}
