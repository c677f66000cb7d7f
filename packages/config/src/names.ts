/** The command-line spelling of a field name: `numMinibatches` → `num-minibatches`. */
export const kebab = (s: string): string => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The field name of a command-line spelling: `num-minibatches` → `numMinibatches`. */
export const camel = (s: string): string =>
  s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Levenshtein distance, for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...new Array<number>(b.length).fill(0),
  ]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The name among `names` closest to `name`: within 3 edits, or one that has `name` as a whole
 * '-'- or camelCase-separated word (`minibatches` of `num-minibatches` or `numMinibatches`).
 */
export function closestName(name: string, names: readonly string[]): string | undefined {
  const best = names.map((n) => [n, editDistance(name, n)] as const).sort((x, y) => x[1] - y[1])[0];
  if (best && best[1] <= 3) return best[0];
  const words = (n: string) => kebab(n).split('-');
  const target = kebab(name);
  return names.find((n) => {
    const w = words(n);
    return w.length > 1 && (kebab(n).endsWith(`-${target}`) || kebab(n).startsWith(`${target}-`));
  });
}

/** " Did you mean --x? Valid options: …" for an unknown name (kebab-case) among `names`. */
export function suggestOption(name: string, names: readonly string[]): string {
  const flags = names.map(kebab);
  const close = closestName(name, flags);
  const hint = close ? ` Did you mean --${close}?` : '';
  return `${hint} Valid options: ${flags.map((n) => `--${n}`).join(', ')} (see --help).`;
}
