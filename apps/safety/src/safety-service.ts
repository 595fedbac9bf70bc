import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { safetyV1 } from '@fastloop/proto';
import { DomainError, MuxServer, toGrpcError, type GrpcServiceBinding, type Logger } from '@fastloop/service-kit';
import type { Classifier } from './classifier';
import type { SafetyMetrics } from './metrics';

/** Fully qualified gRPC service name (also its grpc.health.v1 name). */
export const SAFETY_SERVICE_NAME = 'fastloop.safety.v1.SafetyService';

export interface SafetyServiceDeps {
  classifier: Classifier;
  metrics: SafetyMetrics;
  logger: Logger;
}

/** Binds {@link Classifier} to gRPC: metrics, logging (never of item text) and error mapping. */
export function createSafetyService(deps: SafetyServiceDeps): GrpcServiceBinding {
  const classify = async (request: safetyV1.ClassifyRequest): Promise<safetyV1.ClassifyResponse> => {
    const endTimer = deps.metrics.classifyDuration.startTimer();
    try {
      const response = await deps.classifier.classifyAsync(request);
      record(deps.metrics, request.items.length, response);
      return response;
    } catch (err) {
      deps.metrics.classifications.inc({ verdict: 'error' });
      logFailure(deps.logger, request, err);
      throw err;
    } finally {
      endTimer();
    }
  };
  // ClassifyStream's calls (mux.proto): the edge keeps a few such streams instead of a call each.
  const mux = new MuxServer();
  const implementation: safetyV1.SafetyServiceServer = {
    classify: (
      call: ServerUnaryCall<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse>,
      callback: sendUnaryData<safetyV1.ClassifyResponse>,
    ) => {
      classify(call.request).then(
        (response) => callback(null, response),
        (err: unknown) => callback(toGrpcError(err)),
      );
    },
    classifyStream: (stream) => mux.serveUnary(stream, classify),
  };
  return {
    name: SAFETY_SERVICE_NAME,
    definition: safetyV1.SafetyServiceService,
    implementation,
    drain: () => mux.drain(),
  };
}

const ACTION_LABEL: Partial<Record<safetyV1.Action, string>> = {
  [safetyV1.Action.ACTION_FLAG]: 'flag',
  [safetyV1.Action.ACTION_REDACT]: 'redact',
  [safetyV1.Action.ACTION_BLOCK]: 'block',
};

function record(metrics: SafetyMetrics, newItems: number, response: safetyV1.ClassifyResponse): void {
  metrics.classifications.inc({ verdict: response.verdict === safetyV1.Verdict.VERDICT_BLOCK ? 'block' : 'allow' });
  metrics.itemsScanned.inc(newItems);
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
