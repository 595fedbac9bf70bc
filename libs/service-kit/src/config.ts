import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** Raised when configuration does not validate; the message names every offending field. */
export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** Variables to read; defaults to `process.env`. Tests pass their own object. */
  env?: Record<string, string | undefined>;
  /**
   * Env var naming an optional JSON file whose keys (same names as the env vars) are read first;
   * env vars override it. Default `FASTLOOP_CONFIG_FILE`.
   */
  fileVar?: string;
}

/**
 * Parses a service's configuration once, from an optional JSON file and the environment, with
 * a zod object whose keys are the env var names. The result is frozen: handlers get it passed
 * in and never read `process.env` themselves.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, options: LoadConfigOptions = {}): Readonly<z.infer<S>> {
  const env = options.env ?? process.env;
  const fileVar = options.fileVar ?? 'FASTLOOP_CONFIG_FILE';
  const raw: Record<string, unknown> = {};
  const file = env[fileVar];
  if (file) {
    try {
      Object.assign(raw, JSON.parse(readFileSync(file, 'utf8')));
    } catch (cause) {
      throw new ConfigError(`${fileVar}: cannot read JSON config file '${file}'`, { cause });
    }
  }
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    // An empty env var means "unset" so that `FOO= cmd` falls back to the default.
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return Object.freeze(parsed.data);
}

/** Common zod helpers for env values. */
export const env = {
  port: (def: number) => z.coerce.number().int().min(0).max(65535).default(def),
  int: (def: number, min = 0) => z.coerce.number().int().min(min).default(def),
  number: (def: number, min = 0) => z.coerce.number().min(min).default(def),
  bool: (def: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .transform((v) => v === 'true' || v === '1' || v === 'yes')
      .or(z.boolean())
      .default(def),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Comma-separated list. */
  list: (def: string[] = []) =>
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .or(z.array(z.string()))
      .default(def),
};
