"""How much a better choice of model pays on a CSV dataset, measured as the DataSciCoding
environment sees the data.

    /usr/bin/python3 scripts/headroom.py data/kiln_batches.csv glaze_result --holdout 0.25
    /usr/bin/python3 scripts/headroom.py CSV TARGET --holdout F --seed S --holdout-rows

The table is preprocessed as the environment does it (rows with a missing value dropped, the
first 2000 kept, text columns label-encoded in sorted order, labels re-indexed in sorted order),
the held-out rows are set apart with the environment's stratified draw, and four models are fitted
on all the remaining (reward) rows and scored by ROC AUC on the held-out rows (binary: the
probability of the larger label; more classes: the one-vs-one macro average), and by the mean
ROC AUC over the environment's five 50/50 splits of the reward rows (what the reward is):

- linear, one-hot: text columns one-hot, numeric columns standardised, LogisticRegression;
- linear, as encoded: every column as the environment encodes it, standardised, LogisticRegression;
- random forest: RandomForestClassifier(300 trees) on the encoded columns;
- gradient boosting: HistGradientBoostingClassifier on the encoded columns.

It prints a Markdown table and exits with status 1 unless both tree ensembles beat the better
linear model by at least --gap (default 0.05) on the held-out rows. --holdout-rows prints the
held-out row numbers as JSON instead (a test checks them against the environment's).
"""
import argparse
import json
import sys

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

MAX_ROWS = 2000
SPLITS = 5


def holdout_rows(y, k, fraction, seed):
    """The environment's stratified draw (packages/envs-datascicoding/src/prepare-source.ts)."""
    rng = np.random.RandomState(seed)
    held = []
    for label in range(k):
        rows = np.flatnonzero(y == label)
        take = min(max(int(np.floor(fraction * len(rows) + 0.5)), 1), len(rows) - 1)
        held.append(rng.permutation(rows)[:take])
    return np.sort(np.concatenate(held))


def auc(y_true, proba):
    if proba.shape[1] == 2:
        return roc_auc_score(y_true, proba[:, 1])
    return roc_auc_score(y_true, proba, multi_class='ovo')


def models(text_columns, columns):
    text = [columns.index(c) for c in text_columns]
    numeric = [i for i in range(len(columns)) if i not in text]
    one_hot = ColumnTransformer(
        [('text', OneHotEncoder(handle_unknown='ignore'), text),
         ('numeric', StandardScaler(), numeric)])
    return {
        'linear, one-hot': lambda: make_pipeline(one_hot, LogisticRegression(max_iter=5000)),
        'linear, as encoded': lambda: make_pipeline(StandardScaler(),
                                                    LogisticRegression(max_iter=5000)),
        'random forest': lambda: RandomForestClassifier(n_estimators=300, random_state=0),
        'gradient boosting': lambda: HistGradientBoostingClassifier(random_state=0),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('csv')
    parser.add_argument('target')
    parser.add_argument('--holdout', type=float, default=0.25)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--gap', type=float, default=0.05)
    parser.add_argument('--holdout-rows', action='store_true')
    args = parser.parse_args()

    df = pd.read_csv(args.csv).dropna().iloc[:MAX_ROWS]
    features = df.drop(columns=[args.target]).copy()
    text_columns = [c for c in features.columns
                    if features[c].dtype == object or features[c].dtype == bool]
    for c in text_columns:
        features[c] = pd.factorize(features[c].astype(str), sort=True)[0]
    x = features.to_numpy(dtype=np.float64)
    y, classes = pd.factorize(df[args.target].astype(str), sort=True)
    held = holdout_rows(y, len(classes), args.holdout, args.seed)
    if args.holdout_rows:
        print(json.dumps(held.tolist()))
        return 0
    keep = np.setdiff1d(np.arange(len(y)), held)
    x_reward, y_reward, x_held, y_held = x[keep], y[keep], x[held], y[held]

    scores = {}
    for name, make in models(text_columns, list(features.columns)).items():
        held_auc = auc(y_held, make().fit(x_reward, y_reward).predict_proba(x_held))
        n_test = (len(y_reward) + 1) // 2
        split_aucs = []
        for seed in range(SPLITS):
            order = np.random.RandomState(seed).permutation(len(y_reward))
            test, train = order[:n_test], order[n_test:]
            model = make().fit(x_reward[train], y_reward[train])
            split_aucs.append(auc(y_reward[test], model.predict_proba(x_reward[test])))
        scores[name] = (held_auc, float(np.mean(split_aucs)))

    print('%s: %d rows (%d reward, %d held out, fraction %g, seed %d), %d features, classes %s'
          % (args.csv.split('/')[-1], len(y), len(keep), len(held), args.holdout, args.seed,
             x.shape[1], ', '.join(map(str, classes))))
    print()
    print('| model | held-out ROC AUC | mean ROC AUC, 5 reward splits |')
    print('|---|---|---|')
    for name, (h, r) in scores.items():
        print('| %s | %.4f | %.4f |' % (name, h, r))
    linear = max(scores['linear, one-hot'][0], scores['linear, as encoded'][0])
    trees = min(scores['random forest'][0], scores['gradient boosting'][0])
    print()
    print('gap on the held-out rows (weaker tree ensemble − better linear model): %+.4f '
          '(needed: %.2f)' % (trees - linear, args.gap))
    return 0 if trees - linear >= args.gap else 1


if __name__ == '__main__':
    sys.exit(main())
