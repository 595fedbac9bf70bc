import {
  createLogger,
  createMetricsRegistry,
  installShutdown,
  startAdminServer,
  startGrpcServer,
} from '@fastloop/service-kit';
import { resolveProfile } from '@fastloop/model-profiles';
import { Classifier } from './classifier';
import { GuardJudge } from './guard/guard-judge';
import { GrpcGuardWorker } from './guard/guard-worker';
import { loadSafetyConfig, resolveStateSecret } from './config';
import { createSafetyMetrics } from './metrics';
import { PolicyBook } from './policy';
import { INJECTION_RULES } from './rules/injection-rules';
import { SECRET_RULES } from './rules/secret-rules';
import { createSafetyService } from './safety-service';
import { TenantTurns } from './tenant-turns';

async function main(): Promise<void> {
  const config = loadSafetyConfig();
  const logger = createLogger({ service: 'safety', level: config.LOG_LEVEL });
  const { secret, defaulted } = resolveStateSecret(config);
  if (defaulted) {
    logger.warn(
      'SAFETY_STATE_SECRET is not set: using the development secret; anyone who knows it can forge safety states',
    );
  }
  const policies = new PolicyBook({
    policies: config.SAFETY_POLICIES,
    defaultActions: config.SAFETY_ACTIONS,
    injectionThreshold: config.SAFETY_INJECTION_THRESHOLD,
    guardDefault: config.SAFETY_GUARD_DEFAULT,
  });
  const registry = createMetricsRegistry('safety');
  const metrics = createSafetyMetrics(registry);
  const guardWorker = config.SAFETY_GUARD_ADDRESS
    ? new GrpcGuardWorker(config.SAFETY_GUARD_ADDRESS, config.FASTLOOP_INTERNAL_TOKEN)
    : undefined;
  const guard = guardWorker && {
    judge: new GuardJudge({
      worker: guardWorker,
      profile: await resolveProfile(config.SAFETY_GUARD_PROFILE),
      model: config.SAFETY_GUARD_MODEL,
      policy: config.SAFETY_GUARD_POLICY,
      timeoutMs: config.SAFETY_GUARD_TIMEOUT_MS,
      maxOutputTokens: config.SAFETY_GUARD_MAX_OUTPUT_TOKENS,
      observe: (call) => {
        metrics.guardCalls.inc({ result: call.result });
        metrics.guardPromptTokens.inc(call.sentTokens);
        metrics.guardCachedTokens.inc(call.cachedTokens);
        metrics.guardPrefillTokens.inc(Math.max(0, call.promptTokens - call.cachedTokens));
        metrics.guardDuration.observe(call.seconds);
      },
    }),
    failOpen: config.SAFETY_GUARD_FAIL_OPEN,
  };
  const classifier = new Classifier({
    stateSecret: secret,
    maxItemBytes: config.SAFETY_MAX_ITEM_BYTES,
    maxRequestBytes: config.SAFETY_MAX_REQUEST_BYTES,
    maxFindings: config.SAFETY_MAX_FINDINGS,
    sliceChars: config.SAFETY_SLICE_CHARS,
    pauseAfterMs: config.SAFETY_PAUSE_AFTER_MS,
    policies,
    ...(guard ? { guard } : {}),
  });
  const turns = new TenantTurns({
    queueTimeoutMs: config.SAFETY_QUEUE_TIMEOUT_MS,
    maxQueuedPerTenant: config.SAFETY_MAX_QUEUED_PER_TENANT,
    cpu: { perSecond: config.SAFETY_TENANT_CPU_MS_PER_SECOND, burst: config.SAFETY_TENANT_CPU_BURST_MS },
  });
  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    host: config.BIND_HOST,
    logger,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    services: [createSafetyService({ classifier, metrics, logger, turns })],
  });
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.BIND_HOST,
    registry,
    logger,
    isReady: () => grpc.health.isServing(),
  });
  // No dependencies: ready as soon as both servers listen.
  grpc.health.set(true);
  installShutdown({
    logger,
    steps: [
      { name: 'health NOT_SERVING', run: () => grpc.health.set(false) },
      // tryShutdown stops accepting and lets in-flight calls (synchronous scans) finish.
      { name: 'drain gRPC', run: () => grpc.close() },
      { name: 'close admin server', run: () => admin.close() },
      { name: 'close guard client', run: () => guardWorker?.close() },
      { name: 'stop tenant queues', run: () => turns.close() },
    ],
  });
  logger.info(
    {
      grpcPort: grpc.port,
      adminPort: admin.port,
      secretRules: SECRET_RULES.length,
      injectionRules: INJECTION_RULES.length,
      actions: config.SAFETY_ACTIONS,
      policyTenants: Object.keys(config.SAFETY_POLICIES.tenants).length,
      policyModels: Object.keys(config.SAFETY_POLICIES.models).length,
      maxItemBytes: config.SAFETY_MAX_ITEM_BYTES,
      maxRequestBytes: config.SAFETY_MAX_REQUEST_BYTES,
      maxFindings: config.SAFETY_MAX_FINDINGS,
      guard: config.SAFETY_GUARD_ADDRESS
        ? {
            address: config.SAFETY_GUARD_ADDRESS,
            model: config.SAFETY_GUARD_MODEL,
            default: config.SAFETY_GUARD_DEFAULT,
          }
        : 'off',
    },
    'ready',
  );
}

main().catch((err: unknown) => {
  // Config may be what failed, so this logger uses defaults.
  createLogger({ service: 'safety' }).fatal({ err }, 'startup failed');
  process.exit(1);
});
