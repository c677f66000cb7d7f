/**
 * The trusted Python script that loads and preprocesses a dataset once per process.
 *
 * It runs no candidate code, so it runs outside the sandbox (it may need the network to fill the
 * OpenML cache). Input: one JSON argument describing the dataset. Output: one JSON line on
 * stdout, either `{ ok: true, ... }` with the features as base64 little-endian float64, the
 * labels re-indexed 0..k-1 and the five train/test splits (with a holdout: of the remaining rows,
 * the held-out rows' table indices, features and labels under `holdout`), or
 * `{ ok: false, message }`.
 */
export const PREPARE_SOURCE = `
import base64
import json
import os
import sys


class Problem(Exception):
    pass


def from_frame(df, target, drop, max_rows, where):
    import numpy as np
    import pandas as pd
    missing = [c for c in [target] + drop if c not in df.columns]
    if missing:
        raise Problem('%s has no column(s) %s; columns are: %s'
                      % (where, ', '.join(missing), ', '.join(map(str, df.columns))))
    df = df.drop(columns=drop).dropna()
    df = df.iloc[:max_rows]
    if len(df) < 4:
        raise Problem('%s has %d complete rows; at least 4 are needed' % (where, len(df)))
    labels = df[target]
    features = df.drop(columns=[target]).copy()
    for column in features.columns:
        kind = features[column].dtype
        if kind == object or kind == bool or str(kind) == 'category':
            codes, _ = pd.factorize(features[column].astype(str), sort=True)
            features[column] = codes
    try:
        x = features.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise Problem('%s: a feature column is not numeric after encoding: %s' % (where, exc))
    if labels.dtype == object or labels.dtype == bool:
        labels = labels.astype(str)
    y, classes = pd.factorize(labels, sort=True)
    return x, y, [str(c) for c in classes]


def holdout_rows(y, k, fraction, seed):
    # A stratified draw: for each class in label order, round(fraction * its rows) of them (at
    # least 1, at most all but one), the first entries of a permutation of its rows drawn from one
    # RandomState(seed). Returned ascending.
    import numpy as np
    rng = np.random.RandomState(seed)
    held = []
    for label in range(k):
        rows = np.flatnonzero(y == label)
        if len(rows) < 2:
            raise Problem('class %d has %d row(s); a holdout needs at least 2 of every class'
                          % (label, len(rows)))
        take = min(max(int(np.floor(fraction * len(rows) + 0.5)), 1), len(rows) - 1)
        held.append(rng.permutation(rows)[:take])
    return np.sort(np.concatenate(held))


def builtin(name):
    from sklearn import datasets
    loaders = {
        'iris': datasets.load_iris,
        'wine': datasets.load_wine,
        'breast_cancer': datasets.load_breast_cancer,
        'digits': datasets.load_digits,
    }
    bunch = loaders[name]()
    return bunch.data.astype('float64'), bunch.target, [str(c) for c in bunch.target_names]


def write_atomically(path, write):
    tmp = '%s.tmp-%d' % (path, os.getpid())
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def openml(spec):
    import pandas as pd
    cache = spec['cacheDir']
    csv_path = os.path.join(cache, 'openml-%d.csv' % spec['openml'])
    meta_path = os.path.join(cache, 'openml-%d.json' % spec['openml'])
    if not (os.path.exists(csv_path) and os.path.exists(meta_path)):
        if not spec['allowNetwork']:
            raise Problem('OpenML dataset %d is not in the cache directory %s (expected %s and %s); '
                          'pass allowNetwork: true to download it once'
                          % (spec['openml'], cache, os.path.basename(csv_path),
                             os.path.basename(meta_path)))
        from sklearn.datasets import fetch_openml
        os.makedirs(cache, exist_ok=True)
        bunch = fetch_openml(data_id=spec['openml'], as_frame=True, parser='auto',
                             data_home=os.path.join(cache, 'sklearn'))
        frame = bunch.frame
        target = spec.get('target') or bunch.target.name
        meta = {'name': bunch.details.get('name', 'openml-%d' % spec['openml']), 'target': target}
        write_atomically(csv_path, lambda p: frame.to_csv(p, index=False))
        write_atomically(meta_path, lambda p: open(p, 'w').write(json.dumps(meta)))
    with open(meta_path) as f:
        meta = json.load(f)
    target = spec.get('target') or meta['target']
    df = pd.read_csv(csv_path)
    x, y, classes = from_frame(df, target, spec['drop'], spec['maxRows'], csv_path)
    return meta.get('name'), x, y, classes


def main():
    spec = json.loads(sys.argv[1])
    import numpy as np
    import pandas as pd
    name = spec.get('name')
    if spec['kind'] == 'builtin':
        x, y, classes = builtin(spec['builtin'])
    elif spec['kind'] == 'csv':
        try:
            df = pd.read_csv(spec['csv'])
        except (OSError, ValueError) as exc:
            raise Problem('cannot read CSV %s: %s' % (spec['csv'], exc))
        x, y, classes = from_frame(df, spec['target'], spec['drop'], spec['maxRows'], spec['csv'])
    else:
        stored_name, x, y, classes = openml(spec)
        name = name or stored_name
    if len(classes) < 2:
        raise Problem('the target has a single class (%s); a classifier needs at least two'
                      % ', '.join(classes))
    held = None
    if spec.get('holdout'):
        rows = holdout_rows(y, len(classes), spec['holdout']['fraction'], spec['holdout']['seed'])
        keep = np.setdiff1d(np.arange(len(y)), rows)
        held = {
            'rows': rows.tolist(),
            'rewardRows': keep.tolist(),
            'x': base64.b64encode(np.ascontiguousarray(x[rows], dtype='<f8').tobytes()).decode(),
            'y': [int(v) for v in y[rows]],
        }
        x, y = x[keep], y[keep]
        if len(np.unique(y)) < 2:
            raise Problem('after the holdout the reward rows hold a single class')
    # Identical to train_test_split(test_size=0.5, shuffle=True, random_state=seed): the test rows
    # are the first ceil(n / 2) entries of RandomState(seed).permutation(n), the rest train.
    n_test = (len(y) + 1) // 2
    splits = []
    for seed in range(spec['splits']):
        order = np.random.RandomState(seed).permutation(len(y))
        splits.append({'train': order[n_test:].tolist(), 'test': order[:n_test].tolist()})
    out = {
        'ok': True,
        'name': name,
        'n': int(x.shape[0]),
        'd': int(x.shape[1]),
        'classes': classes,
        'x': base64.b64encode(np.ascontiguousarray(x, dtype='<f8').tobytes()).decode(),
        'y': [int(v) for v in y],
        'splits': splits,
    }
    if held is not None:
        out['holdout'] = held
    sys.stdout.write(json.dumps(out))


if __name__ == '__main__':
    try:
        main()
    except Problem as exc:
        sys.stdout.write(json.dumps({'ok': False, 'message': str(exc)}))
    except Exception as exc:
        sys.stdout.write(json.dumps({'ok': False, 'message': '%s: %s' % (type(exc).__name__, exc)}))
`;
