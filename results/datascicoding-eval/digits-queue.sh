#!/bin/bash
# One lane of the digits NTPO/ETPO queue (docs/results.md, "Evaluation: how it is run"); start two:
#   bash results/datascicoding-eval/digits-queue.sh > lane-a.log 2>&1 &
#   bash results/datascicoding-eval/digits-queue.sh > lane-b.log 2>&1 &
# Each lane takes the next item no lane has claimed (rm -r runs/eval-digits-q/.claims before
# starting lanes again), skips it when its run has finished (here or archived in
# results/datascicoding-eval/digits-t90-q/), resumes it from its checkpoint when
# it has started (e.g. a folder copied back from results/datascicoding-eval/digits-unfinished/),
# and starts it otherwise.
set -u
cd "$(dirname "$0")/../.."
T=${T:-90}
Q=runs/eval-digits-q
A=results/datascicoding-eval/digits-t90-q   # finished runs, archived (npm run archive -w @poad/compare)
mkdir -p $Q/.claims
for item in ${QUEUE:-ntpo:3 etpo:2 ntpo:1 etpo:3 ntpo:2 etpo:1}; do
  algo=${item%:*}; seed=${item#*:}; name=$algo-s$seed
  mkdir $Q/.claims/$name 2>/dev/null || continue
  out=$Q/$name
  dir=$(ls -d $out/compare-* 2>/dev/null | head -1)
  if [ -n "$dir" ] && ls $dir/*/eval.json >/dev/null 2>&1; then echo "$(date +%T) $name finished already"; continue; fi
  if ls $A/$name/*/eval.json >/dev/null 2>&1; then echo "$(date +%T) $name archived in $A already"; continue; fi
  echo "$(date +%T) $name start (${dir:-new})"
  if [ -n "$dir" ]; then
    POAD_NATIVE_THREADS=1 npm run compare -- --resume $dir
  else
    POAD_NATIVE_THREADS=1 npm run compare -- --env datascicoding/digits --algos $algo \
      --first-seed $seed --seeds 1 --eval-episodes 4 --jobs 1 --out $out --extra="--timeout $T"
  fi
  echo "$(date +%T) $name exit $?"
done
