import { safetyV1 } from '@fastloop/proto';
import { ApiErrors, type ApiError, type ResponseObject } from '@fastloop/protocol';
import type { Logger } from '@fastloop/service-kit';
import type { EdgeMetrics } from '../edge-metrics';

/** Where a finding's item index points: the conversation's items, the header, or the output. */
export type FindingSource = 'input' | 'header' | 'output';

/** A finding the turn acts on without refusing it. */
export interface NoticedFinding {
  readonly source: FindingSource;
  readonly finding: safetyV1.Finding;
}

const CATEGORY_NAME: Record<number, string> = {
  [safetyV1.Category.CATEGORY_SECRET]: 'secret',
  [safetyV1.Category.CATEGORY_INJECTION]: 'injection',
  [safetyV1.Category.CATEGORY_POLICY]: 'policy',
};

const ACTION_NAME: Record<number, string> = {
  [safetyV1.Action.ACTION_FLAG]: 'flag',
  [safetyV1.Action.ACTION_REDACT]: 'redact',
  [safetyV1.Action.ACTION_BLOCK]: 'block',
};

export function categoryName(f: safetyV1.Finding): string {
  return CATEGORY_NAME[f.category] ?? 'unknown';
}

export function actionName(f: safetyV1.Finding): string {
  return ACTION_NAME[f.action] ?? 'unknown';
}

/**
 * The 400 a blocked prompt gets: the first finding names kind and place, never the value.
 * `describe` names the place with its verb (`input item 3 was`, `the instructions were`).
 */
export function blockedError(res: safetyV1.ClassifyResponse, describe: (itemIndex: number) => string): ApiError {
  const f = res.findings[0];
  if (!f) return ApiErrors.contentBlocked();
  return ApiErrors.contentBlocked(`Invalid prompt: ${describe(f.itemIndex)} blocked (${f.ruleId}): ${f.message}`);
}

/** The findings of a verdict that ask to flag or redact. */
export function noticed(res: safetyV1.ClassifyResponse, source: FindingSource): NoticedFinding[] {
  return res.findings
    .filter((f) => f.action === safetyV1.Action.ACTION_FLAG || f.action === safetyV1.Action.ACTION_REDACT)
    .map((finding) => ({ source, finding }));
}

/** Response metadata key listing what safety flagged (a client's own key of that name is kept). */
export const SAFETY_METADATA_KEY = 'fastloop_safety';

/**
 * The response-metadata value for noticed findings: `category:rule@source#item,…`, within the
 * Responses API's 512-character limit (the count of what did not fit is appended).
 */
export function metadataValue(found: readonly NoticedFinding[]): string {
  let out = '';
  let dropped = 0;
  for (const { source, finding: f } of found) {
    const entry = `${categoryName(f)}:${f.ruleId}@${source}#${f.itemIndex}:${actionName(f)}`;
    if (out.length + entry.length + 1 > 490) dropped++;
    else out += (out ? ',' : '') + entry;
  }
  return dropped ? `${out},+${dropped} more` : out;
}

/**
 * Records flagged and redacted findings: a metric per finding, one log line (kinds and places,
 * never text), and the response's metadata (set before `response.created`, so every event and
 * the stored response carry it).
 */
export function recordNoticed(
  metrics: EdgeMetrics,
  logger: Logger,
  response: ResponseObject,
  found: readonly NoticedFinding[],
): void {
  if (found.length === 0) return;
  for (const { source, finding: f } of found)
    metrics.safetyFindings.inc({ category: categoryName(f), action: actionName(f), source });
  logger.warn(
    {
      findings: found.map(({ source, finding: f }) => ({
        source,
        rule: f.ruleId,
        item: f.itemIndex,
        action: actionName(f),
        score: f.score,
      })),
    },
    'safety findings',
  );
  response.metadata = { ...response.metadata, [SAFETY_METADATA_KEY]: metadataValue(found) };
}
