import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
// `yaml` is not a declared dependency: it is installed through nx / cosmiconfig (v1 or v2 — both
// have parseAllDocuments, Document.errors and toJSON).
import { parseAllDocuments } from 'yaml';
import { listProfileIds } from '@fastloop/model-profiles';
import {
  describeObject,
  isWorkload,
  referencedNames,
  serviceProblems,
  workloadProblems,
  type K8sObject,
} from './manifest-checks';
import { describeWhenAvailable, kubernetesRendererDependency } from '@fastloop/test-kit';
import {
  autoscalerOf,
  autoscalerProblems,
  customMetricNames,
  disruptionBudgetProblems,
  inferenceWorkerProblems,
  realEngineProblems,
} from './scaling-checks';

const deployDir = __dirname;
const repoRoot = join(deployDir, '..');
const k8sDir = join(deployDir, 'k8s');
const overlays = readdirSync(join(k8sDir, 'overlays')).map((name) => join(k8sDir, 'overlays', name));

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return filesUnder(path, ext);
    return ext.test(entry) ? [path] : [];
  });
}

/** Metric names the services define (string literals in apps/*\/src that look like one). */
function definedMetricNames(): Set<string> {
  const sources = filesUnder(join(repoRoot, 'apps'), /(?<!\.spec)\.ts$/)
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  return new Set(
    [...sources.matchAll(/['"`]((?:fastloop|inference|safety|router)_[a-z0-9_]+)['"`]/g)].map((m) => m[1]),
  );
}

/** Every document of a YAML stream; throws naming the file on a syntax error. */
function parseYaml(text: string, source: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJSON() as K8sObject | null;
    return value ? [value] : [];
  });
}

const yamlFiles = filesUnder(k8sDir, /\.ya?ml$/);
const parsed = new Map(yamlFiles.map((f) => [f, parseYaml(readFileSync(f, 'utf8'), relative(repoRoot, f))]));

/** The objects a kustomization lists under `resources` (files and, recursively, folders); not patches. */
function resourcesOf(dir: string): K8sObject[] {
  const kustomization = parsed.get(join(dir, 'kustomization.yaml'))?.[0] as { resources?: string[] } | undefined;
  if (!kustomization) throw new Error(`${relative(repoRoot, dir)} has no kustomization.yaml`);
  return (kustomization.resources ?? []).flatMap((r) => {
    const path = join(dir, r);
    return statSync(path).isDirectory() ? resourcesOf(path) : (parsed.get(path) ?? []);
  });
}

/** `kubectl kustomize` (or a standalone `kustomize build`) when one is installed. */
function findRenderer(): ((dir: string) => string) | undefined {
  const candidates: [string, string[]][] = [
    ['kubectl', ['kustomize']],
    ['kustomize', ['build']],
  ];
  for (const [cmd, args] of candidates) {
    if (spawnSync(cmd, ['version'], { stdio: 'ignore' }).error) continue;
    return (dir) => {
      const run = spawnSync(cmd, [...args, dir], { encoding: 'utf8' });
      if (run.status !== 0)
        throw new Error(`${cmd} ${args.join(' ')} ${relative(repoRoot, dir)} failed: ${run.stderr || run.error}`);
      return run.stdout;
    };
  }
  return undefined;
}

function expectHardened(objects: readonly K8sObject[]): void {
  const workloads = objects.filter(isWorkload);
  expect(workloads.length).toBeGreaterThan(0);
  expect(workloads.flatMap(workloadProblems)).toEqual([]);
  expect(objects.filter((o) => o.kind === 'Service').flatMap((s) => serviceProblems(s, objects))).toEqual([]);
}

describe('deploy/k8s manifests', () => {
  it('parses every YAML file, and every document is a named Kubernetes object', () => {
    expect(yamlFiles.length).toBeGreaterThan(0);
    const unnamed = [...parsed].flatMap(([file, docs]) =>
      docs
        .filter((d) => !d.apiVersion || !d.kind || (d.kind !== 'Kustomization' && !d.metadata?.name))
        .map(() => relative(repoRoot, file)),
    );
    expect(unnamed).toEqual([]);
  });

  it('keeps every workload of the base and the overlays hardened, and every Service on named ports', () => {
    const own = new Set<K8sObject>();
    for (const dir of [join(k8sDir, 'base'), ...overlays]) for (const o of resourcesOf(dir)) own.add(o);
    expectHardened([...own]);
  });

  it('never pins an image to latest in a kustomization', () => {
    const kustomizations = yamlFiles.filter((f) => f.endsWith('kustomization.yaml'));
    const latest = kustomizations.flatMap((f) => {
      const kustomization = parsed.get(f)?.[0] as { images?: { name: string; newTag?: string }[] } | undefined;
      const images = kustomization?.images ?? [];
      return images.filter((i) => i.newTag === 'latest').map((i) => `${relative(repoRoot, f)}: ${i.name}`);
    });
    expect(latest).toEqual([]);
  });

  it('ships a router catalog identical to apps/router/catalog.default.json', () => {
    const copy = JSON.parse(readFileSync(join(k8sDir, 'base', 'router-catalog.json'), 'utf8'));
    const source = JSON.parse(readFileSync(join(repoRoot, 'apps', 'router', 'catalog.default.json'), 'utf8'));
    expect(copy).toEqual(source);
  });

  it('gives the edge enough grace to drain (preStop + the 25 s service-kit shutdown timeout)', () => {
    const edge = resourcesOf(join(k8sDir, 'base')).find((o) => o.kind === 'Deployment' && o.metadata?.name === 'edge');
    const grace = (edge?.spec?.['template'] as { spec?: { terminationGracePeriodSeconds?: number } }).spec
      ?.terminationGracePeriodSeconds;
    expect(grace).toBeGreaterThanOrEqual(35);
  });
});

const render = findRenderer();
// Rendering needs kubectl or kustomize; without one (allowed outside CI) the file-level checks above still run.
describeWhenAvailable(kubernetesRendererDependency(render !== undefined))('rendered kustomizations', () => {
  const builds = [join(k8sDir, 'base'), ...overlays].map((dir) => ({ name: relative(k8sDir, dir), dir }));
  const rendered = new Map<string, K8sObject[]>();
  beforeAll(() => {
    for (const b of builds) rendered.set(b.name, parseYaml(render!(b.dir), b.name));
  }, 30_000);

  it.each(builds.map((b) => b.name))('%s renders hardened workloads with consistent Services', (name) => {
    expectHardened(rendered.get(name)!);
  });

  it.each(builds.map((b) => b.name))('%s lists every inference pod, and only those, in INFERENCE_WORKERS', (name) => {
    expect(inferenceWorkerProblems(rendered.get(name)!)).toEqual([]);
  });

  it.each(builds.map((b) => b.name))('%s defines every ConfigMap its pods reference', (name) => {
    const objects = rendered.get(name)!;
    const defined = new Set(objects.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata?.name));
    const missing = objects.filter(isWorkload).flatMap((w) =>
      referencedNames(w)
        .configMaps.filter((c) => !defined.has(c))
        .map((c) => `${describeObject(w)} → ${c}`),
    );
    expect(missing).toEqual([]);
  });

  it('dev defines every Secret its pods reference, so it applies to an empty cluster', () => {
    const objects = rendered.get(join('overlays', 'dev'))!;
    const defined = new Set(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata?.name));
    const missing = objects.filter(isWorkload).flatMap((w) =>
      referencedNames(w)
        .secrets.filter((s) => !defined.has(s))
        .map((s) => `${describeObject(w)} → ${s}`),
    );
    expect(missing).toEqual([]);
  });

  it.each(builds.map((b) => b.name))(
    '%s autoscales edges on open connections and workers on queued tokens, from metrics the services export',
    (name) => {
      const objects = rendered.get(name)!;
      expect(autoscalerProblems(objects, definedMetricNames())).toEqual([]);
      const hpaOf = (kind: string, workload: string) => {
        const w = objects.find((o) => o.kind === kind && o.metadata?.name === workload)!;
        return customMetricNames(autoscalerOf(objects, w)!);
      };
      expect(hpaOf('Deployment', 'edge')).toEqual(['fastloop_edge_open_connections']);
      expect(hpaOf('StatefulSet', 'inference')).toEqual(['inference_queued_tokens']);
    },
  );

  it.each(builds.map((b) => b.name))('%s gives every workload a disruption budget that lets one pod go', (name) => {
    expect(disruptionBudgetProblems(rendered.get(name)!)).toEqual([]);
  });

  it('prod serves a real engine: openai-compatible to the vLLM server beside each worker, on a GPU, with its catalog', () => {
    expect(realEngineProblems(rendered.get(join('overlays', 'prod'))!, listProfileIds())).toEqual([]);
    // The same check on dev (the simulator) fails, naming why.
    expect(realEngineProblems(rendered.get(join('overlays', 'dev'))!, listProfileIds())).toEqual(
      expect.arrayContaining(['the inference worker runs INFERENCE_ENGINE=sim, not openai-compatible']),
    );
  });

  it('serves every pods metric an autoscaler reads through the prometheus-adapter rules, and KEDA reads the same', () => {
    const monitoring = join(k8sDir, 'monitoring');
    const adapter = parsed.get(join(monitoring, 'prometheus-adapter-rules.yaml'))![0];
    const rules = (
      parseAllDocuments(adapter.data!['config.yaml'])[0].toJSON() as {
        rules: { seriesQuery: string; name: { as: string } }[];
      }
    ).rules;
    const defined = definedMetricNames();
    for (const r of rules)
      expect([r.name.as, defined.has(/^([a-z0-9_]+)/.exec(r.seriesQuery)![1])]).toEqual([r.name.as, true]);
    const served = new Set(rules.map((r) => r.name.as));
    for (const build of builds) {
      const hpas = rendered.get(build.name)!.filter((o) => o.kind === 'HorizontalPodAutoscaler');
      for (const hpa of hpas)
        for (const m of customMetricNames(hpa)) expect([build.name, m, served.has(m)]).toEqual([build.name, m, true]);
    }
    // KEDA: targets that prod renders, metrics the services export, the prod bounds.
    const prod = rendered.get(join('overlays', 'prod'))!;
    const scaled = parsed.get(join(monitoring, 'keda-scaledobjects.yaml'))!;
    expect(scaled.map((o) => o.metadata?.name).sort()).toEqual(['edge', 'inference']);
    for (const so of scaled) {
      const spec = so.spec as {
        scaleTargetRef: { kind: string; name: string };
        maxReplicaCount: number;
        triggers: { type: string; metadata: { query?: string } }[];
      };
      const target = prod.find(
        (o) => o.kind === spec.scaleTargetRef.kind && o.metadata?.name === spec.scaleTargetRef.name,
      )!;
      expect(target).toBeDefined();
      expect(spec.maxReplicaCount).toBe((autoscalerOf(prod, target)!.spec as { maxReplicas: number }).maxReplicas);
      for (const t of spec.triggers.filter((x) => x.type === 'prometheus'))
        expect(defined.has(/([a-z][a-z0-9_]+)\{/.exec(t.metadata.query!)![1])).toBe(true);
    }
  });

  it('prod generates no Secret (they are created out of band) and runs no in-cluster Redis', () => {
    const objects = rendered.get(join('overlays', 'prod'))!;
    expect(objects.filter((o) => o.kind === 'Secret').map(describeObject)).toEqual([]);
    expect(objects.filter((o) => o.metadata?.name === 'redis').map(describeObject)).toEqual([]);
  });
});

describe('deploy/grafana dashboard', () => {
  const dashboardFile = join(deployDir, 'grafana', 'fastloop-dashboard.json');
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as {
    uid?: string;
    panels: { id: number; targets?: { expr: string }[] }[];
  };

  it('has a uid and unique panel ids', () => {
    expect(dashboard.uid).toBeTruthy();
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics the services define', () => {
    const defined = definedMetricNames();
    const used = dashboard.panels
      .flatMap((p) => p.targets ?? [])
      .flatMap((t) => [...t.expr.matchAll(/\b((?:fastloop|inference|safety|router)_[a-z0-9_]+)/g)].map((m) => m[1]));
    expect(used.length).toBeGreaterThan(0);
    const unknown = [...new Set(used.map((m) => m.replace(/_(bucket|sum|count)$/, '')))].filter((m) => !defined.has(m));
    expect(unknown).toEqual([]);
  });
});

describe('deploy/k8s NetworkPolicies', () => {
  type Peer = { podSelector?: { matchLabels?: Record<string, string> } };
  type Rule = { from?: Peer[]; to?: Peer[] };
  type Policy = {
    podSelector?: { matchLabels?: Record<string, string> };
    ingress?: Rule[];
    egress?: Rule[];
    policyTypes?: string[];
  };
  const policies = (parsed.get(join(k8sDir, 'base', 'network-policies.yaml')) ?? []).filter(
    (o) => o.kind === 'NetworkPolicy',
  );
  const name = (peer: Peer | undefined) => peer?.podSelector?.matchLabels?.['app.kubernetes.io/name'];

  it('denies everything by default and allows only the intended paths between services', () => {
    const deny = policies.find((p) => p.metadata?.name === 'default-deny')!.spec as Policy;
    expect(deny.podSelector).toEqual({});
    expect(deny.policyTypes).toEqual(['Ingress', 'Egress']);
    const ingress = new Set<string>();
    const egress = new Set<string>();
    for (const p of policies) {
      const spec = p.spec as Policy;
      const self = name(spec);
      if (!self) continue;
      for (const rule of spec.ingress ?? [])
        for (const peer of rule.from ?? [{}]) ingress.add(`${name(peer) ?? 'anyone'} → ${self}`);
      for (const rule of spec.egress ?? []) for (const peer of rule.to ?? []) egress.add(`${self} → ${name(peer)}`);
    }
    expect([...ingress].sort()).toEqual(
      [
        'anyone → edge',
        'billing → redis',
        'edge → billing',
        'edge → inference',
        'edge → redis',
        'edge → router',
        'edge → safety',
        'router → inference',
      ].sort(),
    );
    expect([...egress].sort()).toEqual(
      [
        'billing → redis',
        'edge → billing',
        'edge → inference',
        'edge → redis',
        'edge → router',
        'edge → safety',
        'router → inference',
      ].sort(),
    );
  });
});
