import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { encodeMessage, safetyV1 } from '@fastloop/proto';
import {
  DomainError,
  MuxServer,
  toGrpcError,
  type GrpcServiceBinding,
  type Logger,
  hopTrace,
} from '@fastloop/service-kit';
import type { Classifier, HeldState } from './classifier';
import type { SafetyMetrics } from './metrics';
import { serveModeration } from './moderation-sessions';
import { classifyResponseBytesAtMost } from './response-bytes';
import { TenantTurns, type ClassifierTurn } from './tenant-turns';

/** Fully qualified gRPC service name (also its grpc.health.v1 name). */
export const SAFETY_SERVICE_NAME = 'fastloop.safety.v1.SafetyService';

export interface SafetyServiceDeps {
  classifier: Classifier;
  metrics: SafetyMetrics;
  logger: Logger;
  /** Shares the scanning thread between tenants (default: one with a 4 s queue timeout, 256 waiting calls per tenant). */
  turns?: TenantTurns;
}

/**
 * Binds {@link Classifier} to gRPC: metrics, logging (never of item text) and error mapping. Both
 * transports (a call each, and calls on ClassifyStream) run the same `classify`: the size limits,
 * the findings cap and the tenant turns hold on either.
 */
export function createSafetyService(deps: SafetyServiceDeps): GrpcServiceBinding {
  const classify = createClassifyHandler(deps);
  // ClassifyStream's calls (mux.proto): the edge keeps a few such streams instead of a call each.
  // A response too large for the stream fails its own call (`response_too_large`), not the stream.
  const mux = new MuxServer({
    messageBytes: (response: safetyV1.ClassifyResponse) => encodeMessage(safetyV1.ClassifyResponse, response).length,
    messageBytesAtMost: classifyResponseBytesAtMost,
  });
  const implementation: safetyV1.SafetyServiceServer = {
    classify: (
      call: ServerUnaryCall<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse>,
      callback: sendUnaryData<safetyV1.ClassifyResponse>,
    ) => {
      const cancelled = new AbortController();
      call.on('cancelled', () => cancelled.abort());
      classify(call.request, cancelled.signal).then(
        (response) => callback(null, response),
        (err: unknown) => callback(toGrpcError(err)),
      );
    },
    classifyStream: (stream) => mux.serveUnary(stream, classify),
    moderateStream: (stream) =>
      mux.serveSessions<safetyV1.ClassifyRequest, safetyV1.ModerateBatch, safetyV1.ClassifyResponse>(stream, (call) => {
        deps.metrics.moderationSessions.inc();
        serveModeration(call, classify);
      }),
  };
  return {
    name: SAFETY_SERVICE_NAME,
    definition: safetyV1.SafetyServiceService,
    implementation,
    drain: () => mux.drain(),
  };
}

/**
 * The one Classify both transports run: waits for the tenant's turn, scans in slices (pausing
 * between them so other tenants' calls run), records metrics and logs failures.
 */
export function createClassifyHandler(
  deps: SafetyServiceDeps,
): (request: safetyV1.ClassifyRequest, signal?: AbortSignal, held?: HeldState) => Promise<safetyV1.ClassifyResponse> {
  const turns = deps.turns ?? new TenantTurns({ queueTimeoutMs: 4_000, maxQueuedPerTenant: 256 });
  return async (request, signal, held) => {
    hopTrace.mark(request.output ? 'safety.output.start' : 'safety.classify.start');
    const endTimer = deps.metrics.classifyDuration.startTimer();
    let turn: ClassifierTurn | undefined;
    try {
      turn = await turns.begin(request.tenant, signal);
      const response = await deps.classifier.classifyAsync(request, {
        pause: turn.pause.bind(turn),
        rulesDone: turn.end.bind(turn),
        held,
      });
      record(deps.metrics, request, response);
      hopTrace.mark(request.output ? 'safety.output.end' : 'safety.classify.end');
      return response;
    } catch (err) {
      deps.metrics.classifications.inc({ verdict: 'error' });
      logFailure(deps.logger, request, err);
      throw err;
    } finally {
      turn?.end();
      endTimer();
    }
  };
}

const ACTION_LABEL: Partial<Record<safetyV1.Action, string>> = {
  [safetyV1.Action.ACTION_FLAG]: 'flag',
  [safetyV1.Action.ACTION_REDACT]: 'redact',
  [safetyV1.Action.ACTION_BLOCK]: 'block',
};

function record(metrics: SafetyMetrics, request: safetyV1.ClassifyRequest, response: safetyV1.ClassifyResponse): void {
  metrics.classifications.inc({ verdict: response.verdict === safetyV1.Verdict.VERDICT_BLOCK ? 'block' : 'allow' });
  const newItems = request.items.length;
  if (request.output) metrics.outputBatches.inc();
  else metrics.itemsScanned.inc(newItems);
  // A match is counted in the call that brings the item it ends in; later calls that report it
  // again (settling a provisional match, or carrying the first blocking one) do not count it.
  const firstNew = response.itemsSeen - newItems;
  for (const f of response.findings) {
    if (f.endItemIndex >= firstNew)
      metrics.findings.inc({ rule_id: f.ruleId, action: ACTION_LABEL[f.action] ?? 'unknown' });
  }
}

function logFailure(logger: Logger, request: safetyV1.ClassifyRequest, err: unknown): void {
  const context = { tenant: request.tenant, items: request.items.length, stateBytes: request.state.length };
  // Refused requests are the caller's business (the edge re-classifies); only surprises are errors.
  if (err instanceof DomainError) logger.warn({ ...context, code: err.code, reason: err.message }, 'classify refused');
  else logger.error({ ...context, err }, 'classify failed');
}
