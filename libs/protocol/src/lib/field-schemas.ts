import { z } from 'zod';

/**
 * An optional request field that also accepts `null`: clients (and the SDKs' own types) send
 * `null` to mean "unset", so both read as `undefined` after parsing and callers test one thing.
 */
export function optionalField<T extends z.ZodType>(schema: T) {
  return schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();
}

/**
 * An integer `>= min`. zod's own `.min()` reports `origin: "number"` for integers too, and the
 * error translator needs `origin: "int"` to word the error "integer below minimum value" as
 * OpenAI does (vs "decimal" for floats).
 */
export function integerAtLeast(min: number) {
  return z.int().check((ctx) => {
    if (ctx.value < min) {
      ctx.issues.push({ code: 'too_small', origin: 'int', minimum: min, inclusive: true, input: ctx.value });
    }
  });
}

/** Marks the issue raised by the fallback branch of {@link tolerantUnion}. */
export const FALLBACK_ISSUE = 'fastloop.tolerantUnionFallback';

/** A loose object schema discriminated on a literal `type`: what {@link tolerantUnion} accepts. */
type TypedOption = z.ZodObject<{ type: z.ZodLiteral<string> } & z.ZodRawShape, z.core.$loose>;

/**
 * A union discriminated on `type` that also accepts objects of any *other* `type`, carried
 * along untouched (read the wire loosely: new item, part and tool types appear in clients
 * before we support them). An object whose `type` is known but whose fields are wrong still
 * fails with that option's precise issues: the fallback rejects known types with an aborting
 * issue tagged {@link FALLBACK_ISSUE}, and the error translator skips any branch holding one.
 *
 * `fallbackShape` adds fields every carried object must still satisfy (e.g. a string `id`),
 * which also makes them visible on the inferred type.
 */
export function tolerantUnion<
  const Options extends readonly [TypedOption, ...TypedOption[]],
  const Extra extends z.ZodRawShape = {},
>(options: Options, fallbackShape?: Extra) {
  const known = knownTypes(options);
  const unknown = z.looseObject({
    ...(fallbackShape as Extra),
    type: z.string().refine((type) => !known.has(type), {
      abort: true,
      params: { [FALLBACK_ISSUE]: true },
      message: 'Known type with invalid fields',
    }),
  });
  return z.union([z.discriminatedUnion('type', options), unknown]);
}

/** The `type` values a {@link tolerantUnion} recognises; lets callers tell known from carried items. */
export function knownTypes(options: readonly TypedOption[]): ReadonlySet<string> {
  return new Set(options.map((option) => option.shape.type.value));
}
