/**
 * The first problem with a list of action labels, or `null` when it is fine: every label is a
 * non-empty string without commas (learners join and split labels on commas), without
 * surrounding whitespace or line breaks, and (unless allowed) no label appears twice.
 */
export function findLabelProblem(
  labels: readonly unknown[],
  allowDuplicates = false,
): string | null {
  const seen = new Set<string>();
  for (const label of labels) {
    if (typeof label !== 'string' || label.length === 0) return 'empty or non-string label.';
    if (label.includes(',')) return `label ${JSON.stringify(label)} contains a comma.`;
    if (label.trim() !== label || /[\n\r]/.test(label)) {
      return `label ${JSON.stringify(label)} has surrounding whitespace or a line break.`;
    }
    if (seen.has(label) && !allowDuplicates) {
      return `label ${JSON.stringify(label)} appears twice in one actions list.`;
    }
    seen.add(label);
  }
  return null;
}
