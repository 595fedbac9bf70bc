import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '@fastloop/service-kit';
import defaultCatalogJson from '../catalog.default.json';

/** Where the embedded default catalog comes from, as named in errors and logs. */
export const DEFAULT_CATALOG_SOURCE = 'apps/router/catalog.default.json (embedded)';

const UINT32_MAX = 0xffff_ffff;

// Model names travel in URLs, logs and metric labels: keep them to a safe, bounded alphabet.
const modelName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'must be 1-128 characters: letters, digits and . _ : / - (not first)');

const modelSchema = z
  .strictObject({
    /** Canonical id, reported to clients as `model`. */
    id: modelName,
    owned_by: z.string().min(1),
    /** Unix seconds; fixed in the file so /v1/models is stable across restarts. */
    created: z.number().int().min(0),
    /** Free text for operators; not sent to clients. */
    description: z.string().optional(),
    /** Model profile id (tokenizer + chat format), e.g. `harmony-o200k`. */
    profile: z.string().min(1),
    context_window: z.number().int().positive().max(UINT32_MAX),
    max_output_tokens: z.number().int().positive().max(UINT32_MAX),
    /** Name the worker's engine knows the model by; default: `id`. */
    engine_model: z.string().min(1).optional(),
    /** Other names clients may use; each resolves to `id`. */
    aliases: z.array(modelName).default([]),
    /** US dollars per million tokens, for usage reports (`GET /v1/usage` cost_usd); default all 0. */
    pricing: z
      .strictObject({
        input_usd_per_million: z.number().min(0),
        cached_input_usd_per_million: z.number().min(0),
        output_usd_per_million: z.number().min(0),
      })
      .default({ input_usd_per_million: 0, cached_input_usd_per_million: 0, output_usd_per_million: 0 }),
  })
  .refine((m) => m.max_output_tokens <= m.context_window, {
    path: ['max_output_tokens'],
    message: 'must not exceed context_window',
  })
  .transform((m) => ({ ...m, engine_model: m.engine_model ?? m.id }));

const catalogSchema = z
  .strictObject({ models: z.array(modelSchema).min(1, 'must list at least one model') })
  .superRefine((catalog, ctx) => {
    // One namespace for ids and aliases: a name must resolve to exactly one model.
    const owner = new Map<string, string>();
    catalog.models.forEach((m, i) => {
      const names: [string, (string | number)[]][] = [
        [m.id, ['models', i, 'id']],
        ...m.aliases.map((a, j): [string, (string | number)[]] => [a, ['models', i, 'aliases', j]]),
      ];
      for (const [name, path] of names) {
        const taken = owner.get(name);
        if (taken !== undefined)
          ctx.addIssue({ code: 'custom', path, message: `'${name}' is already used by model '${taken}'` });
        else owner.set(name, m.id);
      }
    });
  });

/** One model of the catalog, as validated (snake_case like the file). */
export type CatalogModel = z.output<typeof modelSchema>;

/** The models a router serves, with every id and alias resolvable in O(1). */
export class Catalog {
  private readonly byName: ReadonlyMap<string, CatalogModel>;

  constructor(
    /** Models in file order (the order ListModels returns). */
    readonly models: readonly CatalogModel[],
    /** Where the catalog was read from (file path or the embedded default). */
    readonly source: string,
  ) {
    const byName = new Map<string, CatalogModel>();
    for (const m of models) for (const name of [m.id, ...m.aliases]) byName.set(name, m);
    this.byName = byName;
  }

  /** The model a client's `model` string names (id or alias, case-sensitive), if any. */
  resolve(name: string): CatalogModel | undefined {
    return this.byName.get(name);
  }
}

/**
 * Validates catalog JSON. @throws ConfigError whose message names the source and every
 * offending field, e.g. `models[0].context_window: Too small: expected number to be >0`.
 */
export function parseCatalog(raw: unknown, source: string): Catalog {
  const parsed = catalogSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
    throw new ConfigError(`invalid model catalog ${source}: ${problems.join('; ')}`);
  }
  return new Catalog(Object.freeze(parsed.data.models.map((m) => Object.freeze(m))), source);
}

/**
 * Loads the catalog from `file` (`ROUTER_CATALOG_FILE`) or, when undefined, the embedded default.
 * @throws ConfigError when the file cannot be read, is not JSON, or does not validate.
 */
export function loadCatalog(file: string | undefined): Catalog {
  if (file === undefined) return parseCatalog(defaultCatalogJson, DEFAULT_CATALOG_SOURCE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new ConfigError(`ROUTER_CATALOG_FILE: cannot read JSON model catalog '${file}'`, { cause });
  }
  return parseCatalog(raw, `'${file}'`);
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}
