import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The default Hub address (`HF_ENDPOINT` replaces it, e.g. with a mirror). */
export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

/** Where the Hub client looks and what it sends, as the environment sets it. */
export interface HubEnvironment {
  /** The shared cache: `HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`. */
  cacheDir: string;
  /** `HF_ENDPOINT` without a trailing `/`, else {@link DEFAULT_HUB_ENDPOINT}. */
  endpoint: string;
  /** `HF_TOKEN`, else the token file that `huggingface-cli login` writes, else undefined. */
  token: string | undefined;
  /** Where the token came from, for messages (`HF_TOKEN`, a file path). */
  tokenSource: string | undefined;
  /** `HF_HUB_OFFLINE` set to 1, ON, YES or TRUE: resolve from the cache only. */
  offline: boolean;
}

function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

const set = (v: string | undefined): v is string => v !== undefined && v !== '';

/** True for the values Python's `huggingface_hub` reads as true (1, ON, YES, TRUE; any case). */
export function isTrueEnv(value: string | undefined): boolean {
  return set(value) && ['1', 'ON', 'YES', 'TRUE'].includes(value.trim().toUpperCase());
}

/**
 * The Hub settings from environment variables, with the same names, defaults and order as
 * Python's `huggingface_hub`: `HF_HUB_CACHE` (or the older `HUGGINGFACE_HUB_CACHE`), else
 * `$HF_HOME/hub` with `HF_HOME` defaulting to `$XDG_CACHE_HOME/huggingface` and that to
 * `~/.cache/huggingface`; `HF_ENDPOINT`; `HF_TOKEN` (or `HUGGING_FACE_HUB_TOKEN`), else the file
 * `HF_TOKEN_PATH` or `$HF_HOME/token`; `HF_HUB_OFFLINE`. A leading `~` is expanded.
 */
export function hubEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): HubEnvironment {
  const hfHome = expandHome(
    set(env.HF_HOME)
      ? env.HF_HOME
      : join(
          set(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), '.cache'),
          'huggingface',
        ),
  );
  const cache = set(env.HF_HUB_CACHE)
    ? env.HF_HUB_CACHE
    : set(env.HUGGINGFACE_HUB_CACHE)
      ? env.HUGGINGFACE_HUB_CACHE
      : join(hfHome, 'hub');
  const endpoint = (set(env.HF_ENDPOINT) ? env.HF_ENDPOINT : DEFAULT_HUB_ENDPOINT).replace(
    /\/+$/,
    '',
  );
  let token: string | undefined;
  let tokenSource: string | undefined;
  for (const name of ['HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN']) {
    const v = env[name]?.trim();
    if (set(v)) {
      token = v;
      tokenSource = name;
      break;
    }
  }
  if (token === undefined) {
    const file = expandHome(set(env.HF_TOKEN_PATH) ? env.HF_TOKEN_PATH : join(hfHome, 'token'));
    try {
      const v = readFileSync(file, 'utf8').trim();
      if (v !== '') {
        token = v;
        tokenSource = file;
      }
    } catch {
      // No token file: anonymous access.
    }
  }
  return {
    cacheDir: expandHome(cache),
    endpoint,
    token,
    tokenSource,
    offline: isTrueEnv(env.HF_HUB_OFFLINE),
  };
}
