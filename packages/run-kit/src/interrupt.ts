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
  const handler = (signal: NodeJS.Signals) => {
    if (requested) {
      process.stderr.write(`\n${signal} again: exiting without saving.\n`);
      process.exit(130);
    }
    requested = true;
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
