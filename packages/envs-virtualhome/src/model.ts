/**
 * The abstract state machine behind a VirtualHome task (envs.md §1.3): a handful of numbers
 * instead of the 358-node scene graph, which only ever sees these macro-actions.
 */
export interface VirtualHomeModel {
  /** Every action label, by index. */
  readonly labels: readonly string[];
  /** Back to the fixed start state. */
  reset(): void;
  /** Bit i set = action i is offered now (the hand-written rules of §1.5). */
  validMask(): number;
  /** The whole state as one integer (for snapshots). */
  pack(): number;
  /** Restores a state from `pack`. */
  unpack(state: number): void;
  /** Runs action `a`; returns false when the simulator rejects it (nothing changes). */
  apply(a: number): boolean;
  /** The task's success condition (§1.7), evaluated after a step. */
  success(): boolean;
  /** The prompt for the current state. */
  observation(): string;
}

/** Bitmask of a list of action indices. */
export function mask(...indices: number[]): number {
  let m = 0;
  for (const i of indices) m |= 1 << i;
  return m;
}

/** Bit i set = action i would change the state now (used by the opt-in no-op fix). */
export function effectiveMask(model: VirtualHomeModel): number {
  const saved = model.pack();
  let m = 0;
  for (let a = 0; a < model.labels.length; a++) {
    model.apply(a);
    if (model.pack() !== saved) {
      m |= 1 << a;
      model.unpack(saved);
    }
  }
  return m;
}
