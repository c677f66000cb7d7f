// Random scikit-learn programs for the code model's corpus: bodies of
// `build_model(x_train, y_train)` as DataSciCoding's infilling prompt asks for them, and the
// mistakes a model makes in them together with the error the environment reports and a fix.
//
// A program is built from an estimator (with sampled hyper-parameters), optional preprocessing
// steps and one of several shapes (a bare estimator, make_pipeline, a named Pipeline, a soft
// VotingClassifier, StackingClassifier, BaggingClassifier, CalibratedClassifierCV, a chained
// `.fit`). Every choice is drawn from the generator's seed. What the corpus shows is plausible
// practice, not the best answer: scaling is usual before distance- and gradient-based models
// but not always there, and weak models (a shallow tree, naive Bayes) appear beside strong ones.
//
// The error texts are those scikit-learn 1.2 (Debian 12) and the environment's runner produce;
// `test/code-programs.test.ts` runs one program of every kind in the real sandbox and compares.
import type { Rng } from '@poad/envs-core';

/** What the prompt says about the data (n rows in the full dataset, d features). */
export interface ProgramContext {
  n: number;
  d: number;
}

/** One `from module import name` need of an expression. */
type Import = readonly [module: string, name: string];

/** A piece of code and the imports it needs. */
export interface Expr {
  code: string;
  imports: readonly Import[];
}

/** A program: imports, then statements (lines relative to the body's indentation). */
export interface Program {
  imports: Import[];
  /** Lines after the imports; a nested line starts with its extra indentation. */
  lines: string[];
  /** A comment line written before the imports, if any. */
  comment?: string;
  /** Class name of the object `model` ends up being (what errors about it name). */
  outer: string;
  /** Class name of the final estimator. */
  final: string;
  /** Index into `lines` of the statement that fits the model (-1 when fitting is chained). */
  fitLine: number;
  /** How the imports are grouped when rendered. */
  importStyle: 'one-per-line' | 'grouped';
}

const fmt = (x: number): string => (Number.isInteger(x) ? `${x}.0` : String(x));
const q = (s: string): string => `"${s}"`;

function maybe(rng: Rng, p: number): boolean {
  return rng.float() < p;
}

/** Picks from weighted options. */
export function weighted<T>(rng: Rng, options: readonly (readonly [T, number])[]): T {
  const total = options.reduce((s, [, w]) => s + w, 0);
  let u = rng.float() * total;
  for (const [v, w] of options) {
    u -= w;
    if (u < 0) return v;
  }
  return options[options.length - 1]![0];
}

function call(name: string, args: readonly (readonly [string, string])[]): string {
  return `${name}(${args.map(([k, v]) => (k === '' ? v : `${k}=${v}`)).join(', ')})`;
}

/** Keyword arguments kept with probability p each, in order. */
function pick(rng: Rng, p: number, args: readonly (readonly [string, () => string])[]) {
  return args.filter(() => maybe(rng, p)).map(([k, v]) => [k, v()] as const);
}

/** How much scaling the features matters to an estimator. */
type Scaling = 'needs' | 'helps' | 'none';

interface EstimatorSpec {
  name: string;
  module: string;
  weight: number;
  scaling: Scaling;
  args: (rng: Rng, ctx: ProgramContext) => (readonly [string, string])[];
}

const seedArg = (rng: Rng) =>
  ['random_state', String(rng.choice([0, 0, 1, 7, 42, 42, 123]))] as const;

/** Estimators with predict_proba, and how their hyper-parameters are drawn. */
export const ESTIMATORS: readonly EstimatorSpec[] = [
  {
    name: 'LogisticRegression',
    module: 'sklearn.linear_model',
    weight: 14,
    scaling: 'needs',
    args: (rng) => {
      const a = pick(rng, 0.5, [
        ['C', () => fmt(rng.choice([0.01, 0.1, 0.3, 0.5, 1, 1, 2, 5, 10, 100]))],
      ]);
      const solver = weighted(rng, [
        ['', 5],
        ['lbfgs', 2],
        ['liblinear', 2],
        ['saga', 1],
        ['newton-cg', 1],
      ] as const);
      if (solver === 'liblinear' || solver === 'saga') {
        if (maybe(rng, 0.5)) a.push(['penalty', q(rng.choice(['l1', 'l2']))]);
      }
      if (solver !== '') a.push(['solver', q(solver)]);
      if (maybe(rng, 0.7))
        a.push(['max_iter', String(rng.choice([200, 500, 1000, 1000, 2000, 5000]))]);
      if (maybe(rng, 0.15)) a.push(['class_weight', q('balanced')]);
      if (maybe(rng, 0.2)) a.push(seedArg(rng));
      return a;
    },
  },
  {
    name: 'RandomForestClassifier',
    module: 'sklearn.ensemble',
    weight: 14,
    scaling: 'none',
    args: (rng) => [
      ...pick(rng, 0.7, [['n_estimators', () => String(rng.choice([50, 100, 100, 200, 300]))]]),
      ...pick(rng, 0.4, [
        ['max_depth', () => rng.choice(['None', '4', '6', '8', '10', '12', '16'])],
      ]),
      ...pick(rng, 0.25, [['max_features', () => rng.choice([q('sqrt'), q('log2'), '0.5'])]]),
      ...pick(rng, 0.25, [['min_samples_leaf', () => String(rng.choice([1, 2, 3, 5]))]]),
      ...pick(rng, 0.15, [['criterion', () => q(rng.choice(['gini', 'entropy']))]]),
      ...pick(rng, 0.1, [['class_weight', () => q('balanced')]]),
      ...pick(rng, 0.5, [['random_state', () => seedArg(rng)[1]]]),
    ],
  },
  {
    name: 'ExtraTreesClassifier',
    module: 'sklearn.ensemble',
    weight: 6,
    scaling: 'none',
    args: (rng) => [
      ...pick(rng, 0.7, [['n_estimators', () => String(rng.choice([100, 200, 300]))]]),
      ...pick(rng, 0.3, [['max_depth', () => rng.choice(['None', '8', '12'])]]),
      ...pick(rng, 0.2, [['min_samples_split', () => String(rng.choice([2, 4, 8]))]]),
      ...pick(rng, 0.5, [['random_state', () => String(rng.choice([0, 1, 42]))]]),
    ],
  },
  {
    name: 'GradientBoostingClassifier',
    module: 'sklearn.ensemble',
    weight: 6,
    scaling: 'none',
    args: (rng) => [
      ...pick(rng, 0.6, [['n_estimators', () => String(rng.choice([50, 80, 100]))]]),
      ...pick(rng, 0.6, [['learning_rate', () => fmt(rng.choice([0.05, 0.1, 0.2]))]]),
      ...pick(rng, 0.4, [['max_depth', () => String(rng.choice([2, 3, 4]))]]),
      ...pick(rng, 0.2, [['subsample', () => fmt(rng.choice([0.7, 0.8, 1]))]]),
      ...pick(rng, 0.5, [['random_state', () => String(rng.choice([0, 42]))]]),
    ],
  },
  {
    name: 'HistGradientBoostingClassifier',
    module: 'sklearn.ensemble',
    weight: 6,
    scaling: 'none',
    args: (rng) => [
      ...pick(rng, 0.5, [['max_iter', () => String(rng.choice([50, 100, 200]))]]),
      ...pick(rng, 0.5, [['learning_rate', () => fmt(rng.choice([0.05, 0.1, 0.2]))]]),
      ...pick(rng, 0.3, [['max_leaf_nodes', () => String(rng.choice([15, 31, 63]))]]),
      ...pick(rng, 0.2, [['l2_regularization', () => fmt(rng.choice([0, 0.1, 1]))]]),
      ...pick(rng, 0.4, [['random_state', () => String(rng.choice([0, 42]))]]),
    ],
  },
  {
    name: 'AdaBoostClassifier',
    module: 'sklearn.ensemble',
    weight: 3,
    scaling: 'none',
    args: (rng) => [
      ...pick(rng, 0.6, [['n_estimators', () => String(rng.choice([50, 100, 200]))]]),
      ...pick(rng, 0.5, [['learning_rate', () => fmt(rng.choice([0.1, 0.5, 1]))]]),
      ...pick(rng, 0.4, [['random_state', () => String(rng.choice([0, 42]))]]),
    ],
  },
  {
    name: 'DecisionTreeClassifier',
    module: 'sklearn.tree',
    weight: 5,
    scaling: 'none',
    args: (rng) => [
      ...pick(rng, 0.6, [['max_depth', () => rng.choice(['None', '3', '4', '5', '8', '10'])]]),
      ...pick(rng, 0.3, [['min_samples_leaf', () => String(rng.choice([1, 2, 5, 10]))]]),
      ...pick(rng, 0.3, [['criterion', () => q(rng.choice(['gini', 'entropy']))]]),
      ...pick(rng, 0.4, [['random_state', () => String(rng.choice([0, 42]))]]),
    ],
  },
  {
    name: 'KNeighborsClassifier',
    module: 'sklearn.neighbors',
    weight: 9,
    scaling: 'needs',
    args: (rng) => [
      ...pick(rng, 0.8, [['n_neighbors', () => String(rng.choice([3, 5, 5, 7, 9, 11, 15]))]]),
      ...pick(rng, 0.4, [['weights', () => q(rng.choice(['uniform', 'distance']))]]),
      ...pick(rng, 0.15, [['p', () => String(rng.choice([1, 2]))]]),
    ],
  },
  {
    name: 'GaussianNB',
    module: 'sklearn.naive_bayes',
    weight: 4,
    scaling: 'none',
    args: (rng) => pick(rng, 0.2, [['var_smoothing', () => rng.choice(['1e-9', '1e-8', '1e-6'])]]),
  },
  {
    name: 'MLPClassifier',
    module: 'sklearn.neural_network',
    weight: 6,
    scaling: 'needs',
    args: (rng) => [
      ...pick(rng, 0.8, [
        [
          'hidden_layer_sizes',
          () => rng.choice(['(32,)', '(64,)', '(100,)', '(64, 32)', '(128,)']),
        ],
      ]),
      ...pick(rng, 0.4, [['alpha', () => rng.choice(['1e-4', '1e-3', '0.01'])]]),
      ...pick(rng, 0.2, [['learning_rate_init', () => rng.choice(['1e-3', '0.01'])]]),
      ...pick(rng, 0.7, [['max_iter', () => String(rng.choice([200, 300, 500]))]]),
      ...pick(rng, 0.2, [['early_stopping', () => 'True']]),
      ...pick(rng, 0.5, [['random_state', () => String(rng.choice([0, 1, 42]))]]),
    ],
  },
  {
    name: 'SGDClassifier',
    module: 'sklearn.linear_model',
    weight: 3,
    scaling: 'needs',
    args: (rng) => [
      ['loss', q(rng.choice(['log_loss', 'modified_huber']))],
      ...pick(rng, 0.4, [['alpha', () => rng.choice(['1e-4', '1e-3', '0.01'])]]),
      ...pick(rng, 0.4, [['max_iter', () => String(rng.choice([1000, 2000]))]]),
      ...pick(rng, 0.4, [['random_state', () => String(rng.choice([0, 42]))]]),
    ],
  },
  {
    name: 'LinearDiscriminantAnalysis',
    module: 'sklearn.discriminant_analysis',
    weight: 3,
    scaling: 'none',
    args: (rng) =>
      maybe(rng, 0.3)
        ? [
            ['solver', q('lsqr')],
            ['shrinkage', q('auto')],
          ]
        : ([] as [string, string][]),
  },
  {
    name: 'QuadraticDiscriminantAnalysis',
    module: 'sklearn.discriminant_analysis',
    weight: 1,
    scaling: 'none',
    args: (rng) => pick(rng, 0.6, [['reg_param', () => fmt(rng.choice([0.01, 0.1, 0.5]))]]),
  },
];

/** Classifiers without predict_proba (what the environment rejects). */
export const NO_PROBA: readonly { name: string; module: string; args: string }[] = [
  { name: 'RidgeClassifier', module: 'sklearn.linear_model', args: 'alpha=1.0' },
  { name: 'RidgeClassifier', module: 'sklearn.linear_model', args: '' },
  { name: 'Perceptron', module: 'sklearn.linear_model', args: '' },
  { name: 'NearestCentroid', module: 'sklearn.neighbors', args: '' },
  { name: 'SGDClassifier', module: 'sklearn.linear_model', args: 'loss="hinge"' },
  { name: 'PassiveAggressiveClassifier', module: 'sklearn.linear_model', args: '' },
];

/** A preprocessing step for `ctx` (never invalid for the data's shape). */
function scaler(rng: Rng): Expr {
  const name = weighted(rng, [
    ['StandardScaler', 8],
    ['MinMaxScaler', 3],
    ['RobustScaler', 2],
    ['MaxAbsScaler', 1],
  ] as const);
  return { code: `${name}()`, imports: [['sklearn.preprocessing', name]] };
}

function reducer(rng: Rng, ctx: ProgramContext): Expr | undefined {
  const kind = weighted(rng, [
    ['pca', 4],
    ['kbest', 3],
    ['poly', ctx.d <= 12 ? 2 : 0],
    ['variance', 1],
    ['quantile', 1],
    ['power', 1],
  ] as const);
  switch (kind) {
    case 'pca': {
      const ks = [2, 3, 5, 8, 10, 16, 20, 32].filter((k) => k < ctx.d);
      const n =
        ks.length > 0 && maybe(rng, 0.6)
          ? String(rng.choice(ks))
          : rng.choice(['0.9', '0.95', '0.99']);
      const whiten = maybe(rng, 0.2) ? ', whiten=True' : '';
      return {
        code: `PCA(n_components=${n}${whiten})`,
        imports: [['sklearn.decomposition', 'PCA']],
      };
    }
    case 'kbest': {
      const ks = [2, 3, 5, 8, 10, 15, 20, 30].filter((k) => k < ctx.d);
      const k = ks.length > 0 && maybe(rng, 0.8) ? String(rng.choice(ks)) : q('all');
      const score = maybe(rng, 0.6) ? 'f_classif, ' : '';
      return {
        code: `SelectKBest(${score}k=${k})`,
        imports: [
          ['sklearn.feature_selection', 'SelectKBest'],
          ...(score ? ([['sklearn.feature_selection', 'f_classif']] as const) : []),
        ],
      };
    }
    case 'poly':
      return {
        code: `PolynomialFeatures(degree=2${maybe(rng, 0.4) ? ', include_bias=False' : ''})`,
        imports: [['sklearn.preprocessing', 'PolynomialFeatures']],
      };
    case 'variance':
      return {
        code: `VarianceThreshold(${maybe(rng, 0.5) ? 'threshold=0.0' : ''})`,
        imports: [['sklearn.feature_selection', 'VarianceThreshold']],
      };
    case 'quantile':
      return {
        code: `QuantileTransformer(n_quantiles=${rng.choice([50, 100])}, output_distribution=${q(rng.choice(['uniform', 'normal']))})`,
        imports: [['sklearn.preprocessing', 'QuantileTransformer']],
      };
    case 'power':
      return {
        code: 'PowerTransformer()',
        imports: [['sklearn.preprocessing', 'PowerTransformer']],
      };
    default:
      return undefined;
  }
}

/** An estimator expression (`Class(args)`) and its spec. */
export function estimator(
  rng: Rng,
  ctx: ProgramContext,
  filter: (s: EstimatorSpec) => boolean = () => true,
): { expr: Expr; spec: EstimatorSpec } {
  const specs = ESTIMATORS.filter(filter);
  const spec = weighted(
    rng,
    specs.map((s) => [s, s.weight] as const),
  );
  return {
    spec,
    expr: { code: call(spec.name, spec.args(rng, ctx)), imports: [[spec.module, spec.name]] },
  };
}

/** Preprocessing steps before an estimator that scales as `scaling`. */
function steps(rng: Rng, ctx: ProgramContext, scaling: Scaling, pipeline: boolean): Expr[] {
  const out: Expr[] = [];
  const pScale = scaling === 'needs' ? 0.9 : scaling === 'helps' ? 0.6 : 0.25;
  if (pipeline || maybe(rng, 0.1)) {
    if (maybe(rng, pScale)) out.push(scaler(rng));
    if (maybe(rng, 0.3)) {
      const r = reducer(rng, ctx);
      if (r) out.push(r);
    }
    if (out.length === 0) out.push(scaler(rng));
  }
  return out;
}

const FIT = 'model.fit(x_train, y_train)';

function stepName(code: string): string {
  const cls = code.slice(0, code.indexOf('('));
  const names: Record<string, string> = {
    StandardScaler: 'scaler',
    MinMaxScaler: 'scaler',
    RobustScaler: 'scaler',
    MaxAbsScaler: 'scaler',
    PCA: 'pca',
    SelectKBest: 'select',
    PolynomialFeatures: 'poly',
    VarianceThreshold: 'variance',
    QuantileTransformer: 'quantile',
    PowerTransformer: 'power',
  };
  return names[cls] ?? cls.toLowerCase();
}

function clfName(cls: string): string {
  const short: Record<string, string> = {
    LogisticRegression: 'lr',
    RandomForestClassifier: 'rf',
    ExtraTreesClassifier: 'et',
    GradientBoostingClassifier: 'gb',
    HistGradientBoostingClassifier: 'hgb',
    AdaBoostClassifier: 'ada',
    DecisionTreeClassifier: 'tree',
    KNeighborsClassifier: 'knn',
    GaussianNB: 'nb',
    MLPClassifier: 'mlp',
    SGDClassifier: 'sgd',
    LinearDiscriminantAnalysis: 'lda',
    QuadraticDiscriminantAnalysis: 'qda',
  };
  return short[cls] ?? 'clf';
}

const COMMENTS: Record<string, readonly string[]> = {
  scaled: [
    '# Scale the features, then fit the classifier.',
    '# Standardise the inputs before the classifier.',
    '# A scaled pipeline so that every feature counts alike.',
  ],
  plain: [
    '# Fit a classifier that gives class probabilities.',
    '# A simple baseline model.',
    '# Train the model on the training half.',
  ],
  ensemble: [
    '# Combine several models by averaging their probabilities.',
    '# An ensemble of different classifiers.',
  ],
};

export type ProgramShape =
  | 'bare'
  | 'chained'
  | 'make_pipeline'
  | 'pipeline'
  | 'voting'
  | 'stacking'
  | 'bagging'
  | 'calibrated';

/** A valid program for the data (it runs and its model has predict_proba). */
export function validProgram(rng: Rng, ctx: ProgramContext, shape?: ProgramShape): Program {
  const s =
    shape ??
    weighted(rng, [
      ['bare', 26],
      ['chained', 6],
      ['make_pipeline', 30],
      ['pipeline', 14],
      ['voting', 9],
      ['stacking', 4],
      ['bagging', 6],
      ['calibrated', 5],
    ] as const);
  const importStyle = maybe(rng, 0.6) ? 'one-per-line' : 'grouped';
  const withComment = maybe(rng, 0.15);
  const program = (p: Omit<Program, 'importStyle'>, kind: keyof typeof COMMENTS): Program => ({
    ...p,
    importStyle,
    ...(withComment ? { comment: rng.choice(COMMENTS[kind]!) } : {}),
  });
  switch (s) {
    case 'bare':
    case 'chained': {
      const { expr, spec } = estimator(rng, ctx);
      const lines =
        s === 'bare'
          ? [`model = ${expr.code}`, FIT]
          : [`model = ${expr.code}.fit(x_train, y_train)`];
      return program(
        {
          imports: [...expr.imports],
          lines,
          outer: spec.name,
          final: spec.name,
          fitLine: s === 'bare' ? 1 : -1,
        },
        'plain',
      );
    }
    case 'make_pipeline':
    case 'pipeline': {
      const { expr, spec } = estimator(rng, ctx);
      const pre = steps(rng, ctx, spec.scaling, true);
      const imports = [...pre.flatMap((e) => e.imports), ...expr.imports];
      if (s === 'make_pipeline') {
        return program(
          {
            imports: [['sklearn.pipeline', 'make_pipeline'], ...imports],
            lines: [`model = make_pipeline(${[...pre, expr].map((e) => e.code).join(', ')})`, FIT],
            outer: 'Pipeline',
            final: spec.name,
            fitLine: 1,
          },
          'scaled',
        );
      }
      const named = [
        ...pre.map((e) => `    (${q(stepName(e.code))}, ${e.code}),`),
        `    (${q(maybe(rng, 0.5) ? 'clf' : clfName(spec.name))}, ${expr.code}),`,
      ];
      return program(
        {
          imports: [['sklearn.pipeline', 'Pipeline'], ...imports],
          lines: ['model = Pipeline([', ...named, '])', FIT],
          outer: 'Pipeline',
          final: spec.name,
          fitLine: named.length + 2,
        },
        'scaled',
      );
    }
    case 'voting':
    case 'stacking': {
      const k = s === 'voting' ? rng.choice([2, 2, 3]) : 2;
      const members: { name: string; expr: Expr }[] = [];
      const used = new Set<string>();
      while (members.length < k) {
        const { expr, spec } = estimator(
          rng,
          ctx,
          (e) =>
            !used.has(e.name) &&
            e.name !== 'GradientBoostingClassifier' &&
            (s === 'voting' || e.name !== 'MLPClassifier'),
        );
        used.add(spec.name);
        const scaled = spec.scaling === 'needs' && maybe(rng, 0.7);
        const sc = scaled ? scaler(rng) : undefined;
        members.push({
          name: clfName(spec.name),
          expr: sc
            ? {
                code: `make_pipeline(${sc.code}, ${expr.code})`,
                imports: [['sklearn.pipeline', 'make_pipeline'], ...sc.imports, ...expr.imports],
              }
            : expr,
        });
      }
      const lines = [
        `model = ${s === 'voting' ? 'VotingClassifier' : 'StackingClassifier'}(`,
        '    estimators=[',
        ...members.map((m) => `        (${q(m.name)}, ${m.expr.code}),`),
        '    ],',
      ];
      const imports: Import[] = members.flatMap((m) => m.expr.imports);
      if (s === 'voting') {
        lines.push('    voting="soft",', ')');
        imports.unshift(['sklearn.ensemble', 'VotingClassifier']);
      } else {
        const fin = maybe(rng, 0.8) ? 'LogisticRegression(max_iter=1000)' : 'LogisticRegression()';
        lines.push(`    final_estimator=${fin},`, ')');
        imports.unshift(
          ['sklearn.ensemble', 'StackingClassifier'],
          ['sklearn.linear_model', 'LogisticRegression'],
        );
      }
      lines.push(FIT);
      const outer = s === 'voting' ? 'VotingClassifier' : 'StackingClassifier';
      return program(
        { imports, lines, outer, final: outer, fitLine: lines.length - 1 },
        'ensemble',
      );
    }
    case 'bagging': {
      const { expr, spec } = estimator(rng, ctx, (e) =>
        [
          'DecisionTreeClassifier',
          'KNeighborsClassifier',
          'LogisticRegression',
          'GaussianNB',
        ].includes(e.name),
      );
      const n = rng.choice([10, 20, 50, 100]);
      const extra = maybe(rng, 0.3) ? `, max_samples=${fmt(rng.choice([0.5, 0.8]))}` : '';
      const seed = maybe(rng, 0.5) ? `, random_state=${rng.choice([0, 42])}` : '';
      return program(
        {
          imports: [['sklearn.ensemble', 'BaggingClassifier'], ...expr.imports],
          lines: [
            `model = BaggingClassifier(estimator=${expr.code}, n_estimators=${n}${extra}${seed})`,
            FIT,
          ],
          outer: 'BaggingClassifier',
          final: spec.name,
          fitLine: 1,
        },
        'ensemble',
      );
    }
    case 'calibrated': {
      const base = rng.choice(NO_PROBA.filter((c) => c.name !== 'NearestCentroid'));
      const method = maybe(rng, 0.4) ? `, method=${q(rng.choice(['sigmoid', 'isotonic']))}` : '';
      const cv = `, cv=${rng.choice([3, 5])}`;
      return program(
        {
          imports: [
            ['sklearn.calibration', 'CalibratedClassifierCV'],
            [base.module, base.name],
          ],
          lines: [`model = CalibratedClassifierCV(${base.name}(${base.args})${cv}${method})`, FIT],
          outer: 'CalibratedClassifierCV',
          final: 'CalibratedClassifierCV',
          fitLine: 1,
        },
        'plain',
      );
    }
  }
}

/** The import lines of a program, de-duplicated, in first-use order. */
function importLines(program: Program): string[] {
  const byModule = new Map<string, string[]>();
  for (const [m, n] of program.imports) {
    const names = byModule.get(m) ?? [];
    if (!names.includes(n)) names.push(n);
    byModule.set(m, names);
  }
  if (program.importStyle === 'grouped') {
    return [...byModule].map(([m, ns]) => `from ${m} import ${ns.join(', ')}`);
  }
  return [...byModule].flatMap(([m, ns]) => ns.map((n) => `from ${m} import ${n}`));
}

/** All lines of the body, top-level lines unindented (nested ones keep their extra indent). */
export function programLines(program: Program): string[] {
  return [...(program.comment ? [program.comment] : []), ...importLines(program), ...program.lines];
}

/**
 * The body as the model writes it after the prompt's indentation: the first line as is, every
 * further line indented by four spaces (the prompt ends inside the function body).
 */
export function renderBody(program: Program): string {
  return programLines(program)
    .map((l, i) => (i === 0 ? l : `    ${l}`))
    .join('\n');
}

/** A mistake, the error the environment reports for it, and a fixed program. */
export interface Mistake {
  kind: MistakeKind;
  wrong: Program;
  error: string;
  fixed: Program;
}

export type MistakeKind =
  | 'banned-svc'
  | 'no-predict-proba'
  | 'not-fitted'
  | 'l1-lbfgs'
  | 'pca-too-many'
  | 'kbest-too-many'
  | 'negative-multinomial'
  | 'missing-import'
  | 'wrong-module'
  | 'unclosed-paren'
  | 'fit-without-y';

export const MISTAKE_KINDS: readonly MistakeKind[] = [
  'banned-svc',
  'no-predict-proba',
  'not-fitted',
  'l1-lbfgs',
  'pca-too-many',
  'kbest-too-many',
  'negative-multinomial',
  'missing-import',
  'wrong-module',
  'unclosed-paren',
  'fit-without-y',
];

/** The class that defines `fit`, where it is a base class (what a TypeError about fit names). */
const FIT_OWNER: Record<string, string> = {
  RandomForestClassifier: 'BaseForest',
  ExtraTreesClassifier: 'BaseForest',
  GradientBoostingClassifier: 'BaseGradientBoosting',
  HistGradientBoostingClassifier: 'BaseHistGradientBoosting',
  AdaBoostClassifier: 'BaseWeightBoosting',
  MLPClassifier: 'BaseMultilayerPerceptron',
  SGDClassifier: 'BaseSGDClassifier',
};

const BANNED_ERROR = 'the code uses SVC( which is not allowed here (too slow); use another model';

/** The line number in the executed module of body line `i` (0-based, comment included). */
function moduleLine(i: number): number {
  // assembleProgram: numpy import, two blank lines, the signature, the docstring, then the body.
  return 6 + i;
}

/** A program of `shape` whose final estimator passes `filter`. */
function validWith(
  rng: Rng,
  ctx: ProgramContext,
  shapes: readonly ProgramShape[],
  filter: (s: EstimatorSpec) => boolean,
): Program {
  for (let i = 0; i < 200; i++) {
    const p = validProgram(rng, ctx, rng.choice(shapes));
    const spec = ESTIMATORS.find((e) => e.name === p.final);
    if (spec && filter(spec)) return p;
  }
  throw new Error('no program matched');
}

function replaceFinal(p: Program, to: string, imports: Import[]): Program {
  return {
    ...p,
    imports: [...p.imports.filter(([, n]) => n !== p.final), ...imports],
    lines: p.lines.map((l) =>
      l.replace(new RegExp(`${p.final}\\([^()]*(\\([^()]*\\)[^()]*)*\\)`), to),
    ),
    final: imports[0]![1],
  };
}

/**
 * A mistake of `kind` (or of a random kind) for data of shape `ctx`, or undefined when the kind
 * does not apply to that shape (e.g. too many PCA components needs d small enough).
 */
export function mistake(rng: Rng, ctx: ProgramContext, kind?: MistakeKind): Mistake | undefined {
  const k = kind ?? rng.choice(MISTAKE_KINDS);
  const nTrain = Math.floor(ctx.n / 2);
  switch (k) {
    case 'banned-svc': {
      const fixed = validWith(rng, ctx, ['bare', 'make_pipeline', 'pipeline'], () => true);
      const args = rng.choice([
        'probability=True',
        'probability=True',
        'kernel="rbf", probability=True',
        'C=1.0, probability=True',
        '',
      ]);
      const wrong = replaceFinal(fixed, `SVC(${args})`, [['sklearn.svm', 'SVC']]);
      return { kind: k, wrong, error: BANNED_ERROR, fixed };
    }
    case 'no-predict-proba': {
      const fixed = validWith(rng, ctx, ['bare', 'make_pipeline', 'pipeline'], () => true);
      const bad = rng.choice(NO_PROBA);
      const wrong = replaceFinal(fixed, `${bad.name}(${bad.args})`, [[bad.module, bad.name]]);
      const outer = fixed.outer === 'Pipeline' ? 'Pipeline' : bad.name;
      return {
        kind: k,
        wrong: { ...wrong, outer },
        error: `split 0: build_model returned ${outer}, which has no predict_proba method`,
        fixed,
      };
    }
    case 'not-fitted': {
      const fixed = validWith(rng, ctx, ['bare'], () => true);
      const wrong = {
        ...fixed,
        lines: fixed.lines.filter((_, i) => i !== fixed.fitLine),
        fitLine: -1,
      };
      return {
        kind: k,
        wrong,
        error: `split 0: predict_proba failed: NotFittedError: This ${fixed.outer} instance is not fitted yet. Call 'fit' with appropriate arguments before using this estimator.`,
        fixed,
      };
    }
    case 'fit-without-y': {
      const fixed = validWith(rng, ctx, ['bare'], () => true);
      const lines = [...fixed.lines];
      lines[fixed.fitLine] = 'model.fit(x_train)';
      return {
        kind: k,
        wrong: { ...fixed, lines },
        error: `split 0: TypeError: ${FIT_OWNER[fixed.outer] ?? fixed.outer}.fit() missing 1 required positional argument: 'y'`,
        fixed,
      };
    }
    case 'l1-lbfgs': {
      const c = maybe(rng, 0.5) ? `C=${fmt(rng.choice([0.1, 0.5, 1, 10]))}, ` : '';
      const iter = maybe(rng, 0.5) ? `, max_iter=${rng.choice([500, 1000])}` : '';
      const scaled = maybe(rng, 0.6);
      const sc = scaler(rng);
      const mk = (args: string): Program => ({
        imports: [
          ...(scaled ? ([['sklearn.pipeline', 'make_pipeline'], ...sc.imports] as Import[]) : []),
          ['sklearn.linear_model', 'LogisticRegression'],
        ],
        lines: [
          scaled
            ? `model = make_pipeline(${sc.code}, LogisticRegression(${args}))`
            : `model = LogisticRegression(${args})`,
          FIT,
        ],
        outer: scaled ? 'Pipeline' : 'LogisticRegression',
        final: 'LogisticRegression',
        fitLine: 1,
        importStyle: 'one-per-line',
      });
      const solver = rng.choice(['liblinear', 'saga']);
      return {
        kind: k,
        wrong: mk(`${c}penalty="l1"${iter}`),
        error:
          "split 0: ValueError: Solver lbfgs supports only 'l2' or 'none' penalties, got l1 penalty.",
        fixed: mk(`${c}penalty="l1", solver="${solver}"${iter}`),
      };
    }
    case 'pca-too-many':
    case 'kbest-too-many': {
      if (ctx.d >= nTrain - 1 || ctx.d > 40) return undefined;
      const big = [10, 16, 20, 32, 50, 64, 100].filter((x) => x > ctx.d);
      const small = [2, 3, 5, 8, 10, 16, 20, 32].filter((x) => x < ctx.d);
      if (big.length === 0) return undefined;
      const tooMany = rng.choice(big);
      const { expr, spec } = estimator(rng, ctx);
      const sc = spec.scaling !== 'none' || maybe(rng, 0.5) ? [scaler(rng)] : [];
      const pca = k === 'pca-too-many';
      const stepOf = (v: string): Expr =>
        pca
          ? { code: `PCA(n_components=${v})`, imports: [['sklearn.decomposition', 'PCA']] }
          : {
              code: `SelectKBest(k=${v})`,
              imports: [['sklearn.feature_selection', 'SelectKBest']],
            };
      const mk = (v: string): Program => {
        const all = [...sc, stepOf(v), expr];
        return {
          imports: [['sklearn.pipeline', 'make_pipeline'], ...all.flatMap((e) => e.imports)],
          lines: [`model = make_pipeline(${all.map((e) => e.code).join(', ')})`, FIT],
          outer: 'Pipeline',
          final: spec.name,
          fitLine: 1,
          importStyle: 'one-per-line',
        };
      };
      const fixValue =
        small.length > 0 && maybe(rng, 0.7) ? String(rng.choice(small)) : pca ? '0.95' : q('all');
      const error = pca
        ? `split 0: ValueError: n_components=${tooMany} must be between 0 and min(n_samples, n_features)=${ctx.d} with svd_solver='full'`
        : `split 0: ValueError: k should be <= n_features = ${ctx.d}; got ${tooMany}. Use k='all' to return all features.`;
      return { kind: k, wrong: mk(String(tooMany)), error, fixed: mk(fixValue) };
    }
    case 'negative-multinomial': {
      const alpha = maybe(rng, 0.4) ? `alpha=${fmt(rng.choice([0.1, 0.5, 1]))}` : '';
      const mk = (sc: string): Program => ({
        imports: [
          ['sklearn.pipeline', 'make_pipeline'],
          ['sklearn.preprocessing', sc],
          ['sklearn.naive_bayes', 'MultinomialNB'],
        ],
        lines: [`model = make_pipeline(${sc}(), MultinomialNB(${alpha}))`, FIT],
        outer: 'Pipeline',
        final: 'MultinomialNB',
        fitLine: 1,
        importStyle: 'one-per-line',
      });
      return {
        kind: k,
        wrong: mk('StandardScaler'),
        error: 'split 0: ValueError: Negative values in data passed to MultinomialNB (input X)',
        fixed: mk('MinMaxScaler'),
      };
    }
    case 'missing-import': {
      const fixed = validWith(rng, ctx, ['make_pipeline', 'pipeline', 'bare'], () => true);
      // Every imported name is used, so the one left out is the one Python stops at.
      const dropped = rng.choice([...new Set(fixed.imports.map(([, n]) => n))]);
      const wrong = { ...fixed, imports: fixed.imports.filter(([, n]) => n !== dropped) };
      return {
        kind: k,
        wrong,
        error: `split 0: NameError: name '${dropped}' is not defined`,
        fixed,
      };
    }
    case 'wrong-module': {
      const fixed = validWith(rng, ctx, ['bare', 'make_pipeline'], () => true);
      const typos: Record<string, string> = {
        'sklearn.linear_model': 'sklearn.linear_models',
        'sklearn.ensemble': 'sklearn.ensembles',
        'sklearn.neighbors': 'sklearn.neighbours',
        'sklearn.preprocessing': 'sklearn.preprocess',
        'sklearn.naive_bayes': 'sklearn.bayes',
        'sklearn.neural_network': 'sklearn.neural_networks',
        'sklearn.tree': 'sklearn.trees',
        'sklearn.pipeline': 'sklearn.pipelines',
        'sklearn.discriminant_analysis': 'sklearn.discriminant',
        'sklearn.decomposition': 'sklearn.decompose',
        'sklearn.feature_selection': 'sklearn.features',
      };
      // Python stops at the first import line, so the typo goes into the first module.
      const first = fixed.imports[0]![0];
      const typo = typos[first];
      if (!typo) return undefined;
      const wrong = {
        ...fixed,
        imports: fixed.imports.map(([m, n]) => [m === first ? typo : m, n] as const),
      };
      return {
        kind: k,
        wrong,
        error: `split 0: ModuleNotFoundError: No module named '${typo}'`,
        fixed,
      };
    }
    case 'unclosed-paren': {
      const fixed = validWith(rng, ctx, ['bare', 'make_pipeline'], () => true);
      const lines = [...fixed.lines];
      const i = 0;
      lines[i] = lines[i]!.replace(/\)$/, '');
      const wrong = { ...fixed, lines };
      const before = programLines({ ...fixed, lines: [] }).length;
      return {
        kind: k,
        wrong,
        error: `SyntaxError: '(' was never closed (solution.py, line ${moduleLine(before + i)})`,
        fixed,
      };
    }
  }
}
