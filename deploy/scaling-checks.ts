/**
 * Invariants of how the manifests scale and what they serve: autoscalers, disruption budgets, the
 * router's list of inference workers, and the real engine of an overlay. Pure functions returning
 * problems (empty = fine), like manifest-checks.ts, used on each rendered kustomization.
 */
import { containersOf, describeObject, isWorkload, podTemplate, type K8sObject } from './manifest-checks';

interface MetricSpec {
  type?: string;
  pods?: { metric?: { name?: string } };
  object?: { metric?: { name?: string } };
  external?: { metric?: { name?: string } };
}

interface HpaSpec {
  scaleTargetRef?: { apiVersion?: string; kind?: string; name?: string };
  minReplicas?: number;
  maxReplicas?: number;
  metrics?: MetricSpec[];
}

const hpaSpec = (o: K8sObject) => (o.spec ?? {}) as HpaSpec;

/** The HorizontalPodAutoscaler that scales `workload`, if any. */
export function autoscalerOf(objects: readonly K8sObject[], workload: K8sObject): K8sObject | undefined {
  return objects.find(
    (o) =>
      o.kind === 'HorizontalPodAutoscaler' &&
      hpaSpec(o).scaleTargetRef?.kind === workload.kind &&
      hpaSpec(o).scaleTargetRef?.name === workload.metadata?.name,
  );
}

/** Custom metric names (pods, object, external) an autoscaler reads. */
export function customMetricNames(hpa: K8sObject): string[] {
  return (hpaSpec(hpa).metrics ?? [])
    .map((m) => m.pods?.metric?.name ?? m.object?.metric?.name ?? m.external?.metric?.name)
    .filter((n): n is string => typeof n === 'string');
}

/**
 * Every autoscaler targets a workload of the rendered set, has 1 ≤ minReplicas ≤ maxReplicas, and
 * reads only metrics the services export (`defined`: metric names found in apps/*\/src).
 */
export function autoscalerProblems(objects: readonly K8sObject[], defined: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const hpa of objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')) {
    const spec = hpaSpec(hpa);
    const where = describeObject(hpa);
    const target = objects.find(
      (o) => isWorkload(o) && o.kind === spec.scaleTargetRef?.kind && o.metadata?.name === spec.scaleTargetRef?.name,
    );
    if (!target)
      problems.push(`${where} scales ${spec.scaleTargetRef?.kind}/${spec.scaleTargetRef?.name}, which is not rendered`);
    const min = spec.minReplicas ?? 1;
    if (!(min >= 1 && spec.maxReplicas !== undefined && min <= spec.maxReplicas))
      problems.push(`${where}: minReplicas ${min} / maxReplicas ${spec.maxReplicas} are not 1 ≤ min ≤ max`);
    if (!spec.metrics?.length) problems.push(`${where} has no metrics`);
    for (const name of customMetricNames(hpa))
      if (!defined.has(name)) problems.push(`${where} reads ${name}, which no service exports`);
  }
  return problems;
}

/**
 * Every workload but the dev Redis has one PodDisruptionBudget selecting its pods, and it lets a
 * pod go (maxUnavailable ≥ 1): node drains must be able to proceed even at one replica.
 */
export function disruptionBudgetProblems(objects: readonly K8sObject[]): string[] {
  const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget');
  const problems: string[] = [];
  for (const w of objects.filter(isWorkload)) {
    if (w.metadata?.name === 'redis') continue;
    const labels = podTemplate(w).metadata?.labels ?? {};
    const mine = budgets.filter((b) => {
      const match = (b.spec?.['selector'] as { matchLabels?: Record<string, string> } | undefined)?.matchLabels ?? {};
      return Object.keys(match).length > 0 && Object.entries(match).every(([k, v]) => labels[k] === v);
    });
    if (mine.length !== 1) {
      problems.push(`${describeObject(w)} has ${mine.length} PodDisruptionBudgets (want 1)`);
      continue;
    }
    const max = mine[0].spec?.['maxUnavailable'];
    if (!(typeof max === 'number' && max >= 1))
      problems.push(`${describeObject(mine[0])}: maxUnavailable ${String(max)} would block node drains`);
  }
  return problems;
}

/**
 * The router's INFERENCE_WORKERS must name each pod the inference StatefulSet may have by its
 * stable DNS name (`<set>-<i>.<serviceName>:<grpc port>`): every pod up to its autoscaler's
 * maxReplicas (or its replica count without one), once, and no other.
 */
export function inferenceWorkerProblems(objects: readonly K8sObject[]): string[] {
  const workers = objects.find((o) => o.kind === 'ConfigMap' && o.data?.['INFERENCE_WORKERS'] !== undefined)?.data?.[
    'INFERENCE_WORKERS'
  ];
  const set = objects.find((o) => o.kind === 'StatefulSet' && o.metadata?.name === 'inference');
  if (workers === undefined || !set) return ['no INFERENCE_WORKERS ConfigMap or no inference StatefulSet'];
  const replicas = Number(set.spec?.['replicas'] ?? 1);
  const hpa = autoscalerOf(objects, set);
  const most = hpa ? Number(hpaSpec(hpa).maxReplicas) : replicas;
  const serviceName = String(set.spec?.['serviceName']);
  const grpcPort = containersOf(set)
    .flatMap((c) => c.ports ?? [])
    .find((p) => p.name === 'grpc')?.containerPort;
  const expected = Array.from({ length: most }, (_, i) => `inference-${i}=inference-${i}.${serviceName}:${grpcPort}`);
  const listed = workers
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
  const what = hpa ? `its autoscaler's maxReplicas is ${most}` : `the StatefulSet has ${replicas} replicas`;
  return [
    ...(replicas > most ? [`the StatefulSet's ${replicas} replicas exceed its autoscaler's maxReplicas ${most}`] : []),
    ...expected.filter((w) => !listed.includes(w)).map((w) => `INFERENCE_WORKERS lacks ${w} (${what})`),
    ...listed
      .filter((w) => !expected.includes(w))
      .map((w) => `INFERENCE_WORKERS lists ${w}, which no pod can be (${what})`),
  ];
}

/** A model of the router's catalog, as far as these checks read it. */
interface CatalogModel {
  id?: string;
  description?: string;
  profile?: string;
  engine_model?: string;
}

/**
 * An overlay that serves a real engine: the inference worker runs `openai-compatible` (not the
 * simulator) against an upstream a container of the same pod serves when the URL is loopback, some
 * container of the pod asks for a GPU, and the router's catalog lists only models that upstream
 * serves (`engine_model` = OPENAI_COMPAT_MODEL), none of them simulated, with a profile from `profiles`.
 */
export function realEngineProblems(objects: readonly K8sObject[], profiles: readonly string[]): string[] {
  const set = objects.find((o) => o.kind === 'StatefulSet' && o.metadata?.name === 'inference');
  if (!set) return ['no inference StatefulSet'];
  const containers = containersOf(set);
  const worker = containers.find((c) => c.name === 'inference');
  const env = Object.fromEntries((worker?.env ?? []).map((e) => [e.name, e.value]));
  const problems: string[] = [];
  if (env['INFERENCE_ENGINE'] !== 'openai-compatible')
    problems.push(`the inference worker runs INFERENCE_ENGINE=${env['INFERENCE_ENGINE']}, not openai-compatible`);
  const url = env['OPENAI_COMPAT_URL'];
  if (!url) problems.push('OPENAI_COMPAT_URL is not set');
  else {
    const u = new URL(url);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
    const served = containers.some((c) => c !== worker && (c.ports ?? []).some((p) => p.containerPort === port));
    if (loopback && !served)
      problems.push(`OPENAI_COMPAT_URL ${url}: no other container of the pod serves port ${port}`);
  }
  const gpu = containers.some((c) =>
    Object.keys({ ...c.resources?.limits }).some((r) => /(^|\/)gpu$/.test(r) || r.startsWith('nvidia.com/')),
  );
  if (!gpu) problems.push('no container of the inference pod asks for a GPU (limits nvidia.com/gpu or similar)');
  const catalogMap = objects.find((o) => o.kind === 'ConfigMap' && o.data?.['catalog.json'] !== undefined);
  const models = catalogMap
    ? ((JSON.parse(catalogMap.data!['catalog.json']) as { models?: CatalogModel[] }).models ?? [])
    : [];
  if (models.length === 0) problems.push('no router catalog with models');
  for (const m of models) {
    const engineModel = m.engine_model ?? m.id;
    if (engineModel !== env['OPENAI_COMPAT_MODEL'])
      problems.push(
        `catalog model ${m.id} is served as ${engineModel}, the upstream serves ${env['OPENAI_COMPAT_MODEL']}`,
      );
    if (/simulat/i.test(`${m.id} ${m.description ?? ''}`)) problems.push(`catalog model ${m.id} is the simulator`);
    if (!profiles.includes(m.profile ?? '')) problems.push(`catalog model ${m.id} has unknown profile ${m.profile}`);
  }
  return problems;
}
