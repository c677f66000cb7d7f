/**
 * Turns the first Ctrl-C (SIGINT) or SIGTERM into a flag the training loop checks between
 * iterations, so it can save a checkpoint and exit cleanly; a second signal exits at once.
 * Returns an object with `requested` and a `dispose()` that removes the handlers.
 */
export function trapInterrupts(onFirst?: (signal: string) => void): {
  readonly requested: boolean;
  dispose(): void;
} {
  let requested = false;
  let firstAt = 0;
  const handler = (signal: NodeJS.Signals) => {
    // Ctrl-C reaches every process of the terminal's group, so a wrapper (e.g. tsx) that also
    // forwards it makes one key press arrive twice: count signals within 1 s as one.
    if (requested && Date.now() - firstAt < 1000) return;
    if (requested) {
      process.stderr.write(`\n${signal} again: exiting without saving.\n`);
      process.exit(130);
    }
    requested = true;
    firstAt = Date.now();
    onFirst?.(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    get requested() {
      return requested;
    },
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
