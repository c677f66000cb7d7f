import { existsSync } from 'node:fs';

/** Debian's Chromium (apt-get install chromium); nothing is downloaded. */
export const CHROMIUM = process.env.POAD_CHROMIUM ?? '/usr/bin/chromium';

/** Throws with the fix when the system browser is missing. */
export function requireChromium(): string {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium) or set POAD_CHROMIUM to a Chromium or Chrome binary`,
    );
  }
  return CHROMIUM;
}
