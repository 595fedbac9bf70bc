export {
  ciRequiresEverything,
  describeWhenAvailable,
  gateOf,
  missingMessage,
  type TestDependency,
} from './lib/test-dependency';
export { kubernetesRendererDependency, testModel, type TestModel } from './lib/known-dependencies';
export { schemaProblems } from './lib/schema-problems';
export { cpuMsOf, maxCpuMsBetweenTicks } from './lib/cpu-time';
export { MetricsText, registryMetricValue } from './lib/metrics';
