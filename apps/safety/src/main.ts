import { createLogger, createMetricsRegistry, installShutdown, startAdminServer, startGrpcServer } from '@fastloop/service-kit';
import { Classifier } from './classifier';
import { loadSafetyConfig, resolveStateSecret } from './config';
import { createSafetyMetrics } from './metrics';
import { RULES, RULESET_HASH } from './rules';
import { createSafetyService } from './safety-service';

async function main(): Promise<void> {
  const config = loadSafetyConfig();
  const logger = createLogger({ service: 'safety', level: config.LOG_LEVEL });
  const { secret, defaulted } = resolveStateSecret(config);
  if (defaulted) {
    logger.warn('SAFETY_STATE_SECRET is not set: using the development secret; anyone who knows it can forge safety states');
  }
  const registry = createMetricsRegistry('safety');
  const classifier = new Classifier({ stateSecret: secret, maxItemBytes: config.SAFETY_MAX_ITEM_BYTES });
  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    host: config.BIND_HOST,
    logger,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    services: [createSafetyService({ classifier, metrics: createSafetyMetrics(registry), logger })],
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
    ],
  });
  logger.info(
    { grpcPort: grpc.port, adminPort: admin.port, rules: RULES.length, rulesetHash: RULESET_HASH, maxItemBytes: config.SAFETY_MAX_ITEM_BYTES },
    'ready',
  );
}

main().catch((err: unknown) => {
  // Config may be what failed, so this logger uses defaults.
  createLogger({ service: 'safety' }).fatal({ err }, 'startup failed');
  process.exit(1);
});
