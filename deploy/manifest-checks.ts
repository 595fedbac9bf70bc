/**
 * Hardening invariants for the Kubernetes manifests under deploy/k8s, as pure functions that
 * return a list of problems (empty = fine), so a failing test names every offence at once.
 * Used by validate-manifests.spec.ts on the raw files and on each rendered overlay.
 */

/** The subset of a Kubernetes object these checks read. YAML gives no guarantees: all optional. */
export interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}

interface Probe {
  httpGet?: { port?: string | number };
  tcpSocket?: { port?: string | number };
  grpc?: { port?: number };
  exec?: { command?: string[] };
}

export interface Container {
  name?: string;
  image?: string;
  ports?: { name?: string; containerPort?: number }[];
  env?: { name?: string; value?: string }[];
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  securityContext?: SecurityContext;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  volumeMounts?: { name?: string; mountPath?: string; readOnly?: boolean }[];
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: PodSpec;
}

/** Kinds whose `spec.template` is a pod template. */
export const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

/** IANA_SVC_NAME, what Kubernetes requires of a port name. */
const PORT_NAME = /^(?=.{1,15}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

export const describeObject = (o: K8sObject): string => `${o.kind ?? '?'}/${o.metadata?.name ?? '?'}`;

export const isWorkload = (o: K8sObject): boolean => WORKLOAD_KINDS.has(o.kind ?? '');

export function podTemplate(o: K8sObject): PodTemplate {
  return (o.spec?.['template'] ?? {}) as PodTemplate;
}

export function containersOf(o: K8sObject): Container[] {
  const spec = podTemplate(o).spec ?? {};
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

/** A tag or a digest, and never `latest`. */
export function imageProblem(image: string | undefined): string | undefined {
  if (!image) return 'has no image';
  if (image.includes('@sha256:')) return undefined;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  if (colon < 0) return `image ${image} has no tag (implies :latest)`;
  if (lastSegment.slice(colon + 1) === 'latest') return `image ${image} uses :latest`;
  return undefined;
}

/** Every hardening invariant of one workload (pod spec and each container). */
export function workloadProblems(o: K8sObject): string[] {
  const problems: string[] = [];
  const spec = podTemplate(o).spec;
  if (!spec?.containers?.length) return [`${describeObject(o)} has no containers`];
  const pod = spec.securityContext ?? {};
  const where = describeObject(o);
  if (spec.automountServiceAccountToken !== false)
    problems.push(`${where}: automountServiceAccountToken must be false (no pod talks to the API server)`);
  for (const hostField of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec[hostField]) problems.push(`${where}: ${hostField} is set`);
  }
  if (pod.runAsUser === 0) problems.push(`${where}: pod runs as uid 0`);
  for (const c of containersOf(o)) problems.push(...containerProblems(`${where} container ${c.name ?? '?'}`, c, pod));
  problems.push(...scrapeAnnotationProblems(o));
  return problems;
}

function containerProblems(where: string, c: Container, pod: SecurityContext): string[] {
  const problems: string[] = [];
  const sc = c.securityContext ?? {};
  const image = imageProblem(c.image);
  if (image) problems.push(`${where}: ${image}`);
  for (const kind of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory']) {
      if (c.resources?.[kind]?.[resource] === undefined) problems.push(`${where}: no resources.${kind}.${resource}`);
    }
  }
  if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) problems.push(`${where}: runAsNonRoot is not true`);
  if ((sc.runAsUser ?? pod.runAsUser) === 0) problems.push(`${where}: runs as uid 0`);
  if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem is not true`);
  if (sc.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation is not false`);
  if (sc.privileged) problems.push(`${where}: privileged`);
  if (!sc.capabilities?.drop?.includes('ALL')) problems.push(`${where}: capabilities.drop lacks ALL`);
  if (sc.capabilities?.add?.length) problems.push(`${where}: adds capabilities ${sc.capabilities.add.join(', ')}`);
  const seccomp = (sc.seccompProfile ?? pod.seccompProfile)?.type;
  if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
    problems.push(`${where}: seccompProfile is ${seccomp ?? 'unset'}`);
  problems.push(...portProblems(where, c), ...probeProblems(where, c), ...writablePathProblems(where, c));
  return problems;
}

function portProblems(where: string, c: Container): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const p of c.ports ?? []) {
    if (!p.name) problems.push(`${where}: port ${p.containerPort} has no name`);
    else if (!PORT_NAME.test(p.name)) problems.push(`${where}: port name '${p.name}' is not a valid IANA_SVC_NAME`);
    else if (seen.has(p.name)) problems.push(`${where}: port name '${p.name}' is used twice`);
    if (p.name) seen.add(p.name);
  }
  return problems;
}

/** Readiness and liveness exist; HTTP/TCP probes use port names, gRPC probes a declared port. */
function probeProblems(where: string, c: Container): string[] {
  const problems: string[] = [];
  const names = new Set((c.ports ?? []).map((p) => p.name));
  const numbers = new Set((c.ports ?? []).map((p) => p.containerPort));
  for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
    const probe = c[kind];
    if (!probe) {
      if (kind !== 'startupProbe') problems.push(`${where}: no ${kind}`);
      continue;
    }
    const namedPort = probe.httpGet?.port ?? probe.tcpSocket?.port;
    if (namedPort !== undefined && (typeof namedPort !== 'string' || !names.has(namedPort))) {
      problems.push(`${where}: ${kind} port ${namedPort} is not one of the container's named ports`);
    }
    // Kubernetes' grpc probe takes a number only; it must still be a declared port.
    if (probe.grpc && !numbers.has(probe.grpc.port))
      problems.push(`${where}: ${kind} grpc port ${probe.grpc.port} is not a declared containerPort`);
  }
  return problems;
}

/** With a read-only root, the paths a service writes must be absolute and on a writable mount. */
function writablePathProblems(where: string, c: Container): string[] {
  const problems: string[] = [];
  const writable = (c.volumeMounts ?? []).filter((m) => !m.readOnly).map((m) => m.mountPath ?? '');
  for (const e of c.env ?? []) {
    if (e.name !== 'USAGE_OUTBOX_DIR' || e.value === undefined) continue;
    if (!e.value.startsWith('/')) problems.push(`${where}: USAGE_OUTBOX_DIR '${e.value}' is not absolute`);
    else if (!writable.some((m) => e.value === m || e.value!.startsWith(m.endsWith('/') ? m : `${m}/`))) {
      problems.push(`${where}: USAGE_OUTBOX_DIR '${e.value}' is not under a writable volume mount`);
    }
  }
  return problems;
}

/** `prometheus.io/port` must be a port some container declares (the admin port). */
function scrapeAnnotationProblems(o: K8sObject): string[] {
  const annotations = podTemplate(o).metadata?.annotations ?? {};
  if (annotations['prometheus.io/scrape'] !== 'true') return [];
  const port = Number(annotations['prometheus.io/port']);
  const declared = containersOf(o).flatMap((c) => c.ports ?? []);
  const match = declared.find((p) => p.containerPort === port);
  if (!match)
    return [
      `${describeObject(o)}: prometheus.io/port ${annotations['prometheus.io/port']} is not a declared containerPort`,
    ];
  return match.name === 'admin'
    ? []
    : [`${describeObject(o)}: prometheus.io/port ${port} is '${match.name}', expected the admin port`];
}

interface ServiceSpec {
  selector?: Record<string, string>;
  ports?: { name?: string; port?: number; targetPort?: string | number }[];
}

/** Each Service selects a workload and targets, by name, ports its pods declare. */
export function serviceProblems(service: K8sObject, objects: readonly K8sObject[]): string[] {
  const where = describeObject(service);
  const spec = (service.spec ?? {}) as ServiceSpec;
  const selector = Object.entries(spec.selector ?? {});
  if (!selector.length) return [`${where}: no selector`];
  const selected = objects.filter(isWorkload).filter((w) => {
    const labels = podTemplate(w).metadata?.labels ?? {};
    return selector.every(([k, v]) => labels[k] === v);
  });
  if (!selected.length) return [`${where}: selector ${JSON.stringify(spec.selector)} matches no workload`];
  const names = new Set(selected.flatMap(containersOf).flatMap((c) => (c.ports ?? []).map((p) => p.name)));
  const problems: string[] = [];
  for (const p of spec.ports ?? []) {
    if (!p.name) problems.push(`${where}: port ${p.port} has no name`);
    if (typeof p.targetPort !== 'string')
      problems.push(`${where}: port ${p.name ?? p.port} targets ${p.targetPort ?? 'nothing'}, not a named port`);
    else if (!names.has(p.targetPort))
      problems.push(
        `${where}: port ${p.name ?? p.port} targets '${p.targetPort}', which no selected container declares`,
      );
  }
  return problems;
}

/** Names of the ConfigMaps and Secrets a workload's pods reference (env, envFrom, volumes). */
export function referencedNames(o: K8sObject): { configMaps: string[]; secrets: string[] } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const walk = (node: unknown, key?: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n));
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (
      (key === 'configMapKeyRef' || key === 'configMapRef' || key === 'configMap') &&
      typeof record['name'] === 'string'
    )
      configMaps.add(record['name']);
    if ((key === 'secretKeyRef' || key === 'secretRef') && typeof record['name'] === 'string')
      secrets.add(record['name']);
    if (key === 'secret' && typeof record['secretName'] === 'string') secrets.add(record['secretName']);
    for (const [k, v] of Object.entries(record)) walk(v, k);
  };
  walk(podTemplate(o).spec);
  return { configMaps: [...configMaps], secrets: [...secrets] };
}
