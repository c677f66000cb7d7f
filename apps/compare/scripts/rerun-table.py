# The table of docs/results.md "Runs that end at their best" from results/rerun/ (the archived
# comparisons and the held-out scorings): python3 apps/compare/scripts/rerun-table.py [results/rerun]
import gzip, json, sys, zipfile

root = sys.argv[1] if len(sys.argv) > 1 else 'results/rerun'


def rows_of(ds, seed):
    with zipfile.ZipFile(f'{root}/{ds}.zip') as z:
        return [json.loads(l) for l in z.read(f'poad-s{seed}/metrics.jsonl').decode().splitlines() if l]


print('| run | best checkpoint: iteration (5-iteration mean reward) | monitor | collapsed again | programs of | ran on held-out rows | mean held-out AUC of those | best of 1 | best of 16 | best of 256 |')
print('|---|---|---|---|---|---|---|---|---|---|')
for ds, seed in [('kiln_batches', 22), ('ferry_crossings', 22), ('ferry_crossings', 23), ('ferry_crossings', 24)]:
    rows = rows_of(ds, seed)
    mr = [r['meanReward'] for r in rows]
    # --keep-best meanReward:max@5: the mean of the last 5 iterations, ties keep the earlier.
    means = [(sum(mr[i - 5:i]) / 5, rows[i - 1]['iteration']) for i in range(5, len(mr) + 1)]
    best5, best_it = max(means, key=lambda m: (m[0], -m[1]))
    fires = [str(r['iteration']) for r in rows if r.get('collapse')]
    last8 = sum(mr[-8:]) / 8
    again = 'yes' if last8 < best5 - 0.5 else f'no (last 8: {last8:.3f})'
    for which, label in [('best', 'best checkpoint'), ('latest', 'final checkpoint'), ('untrained', 'untrained model')]:
        x = json.load(gzip.open(f'{root}/heldout-{which}-{ds}-{seed}.json.gz'))['summaries'][0]
        k = x['bestOfK']
        auc = '—' if x['meanAuc'] is None else f"{x['meanAuc']:.3f}"
        head = (f"| {ds} seed {seed} | {best_it} ({best5:.3f}) | {'fired at ' + ', '.join(fires) if fires else 'quiet'} | {again} "
                if which == 'best' else '| | | | ')
        print(f"{head}| {label} | {x['ran'] * 100:.1f}% | {auc} | {k[0]:.3f} | {k[15]:.3f} | {k[255]:.3f} |")
