import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { environmentSchema, loadAppConfig } from '@switchboard/config';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { ClusterLink } from '../../../apps/server/src/cluster/cluster-link';
import { DRAIN_MESSAGE_GRACE_MS } from '../../../apps/server/src/server-drain/drain-allowance';
import { ServerDrain } from '../../../apps/server/src/server-drain/server-drain';
import { CallMetrics } from '../../../apps/server/src/metrics/call-metrics';
import { LiveCallMetrics } from '../../../apps/server/src/metrics/live-call-metrics';
import { MetricsRegistry } from '../../../apps/server/src/metrics/metrics.registry';

// LiveCallMetrics only reads the media streams when scraped; the real service would pull in the
// whole call path (engines, database, Twilio) just to register three gauges.
jest.mock('../../../apps/server/src/twilio/media-stream/media-stream.service', () => ({ MediaStreamService: class MediaStreamService {} }));

/**
 * No cluster runs here, so docker/kubernetes/ is checked two ways: every object against the
 * Kubernetes (or KEDA) OpenAPI schema, as the API server would, and against the code it deploys:
 * the probes' paths and port, the grace period against the drain's own bound, the env against the
 * config schema, the autoscaler's metric against the series the server registers. A manifest that
 * `kubectl apply` accepts can still SIGKILL callers mid-drain or scale on a metric nobody exports.
 */
const ROOT = join(__dirname, '..', '..', '..');
const DIR = join(ROOT, 'docker', 'kubernetes');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** In the directory but deliberately not in kustomization.yaml; each must say so, there and at its top. */
const OPTIONAL_FILES = ['secret.example.yaml', 'keda-scaledobject.yaml', 'ingress.example.yaml'];

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  [field: string]: any;
}

interface Manifest {
  file: string;
  object: KubeObject;
}

/** Every kind these manifests may hold, with the model that validates it; anything else fails. */
const MODELS: Record<string, (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': (data) => new Deployment(data),
  'v1 Service': (data) => new Service(data),
  'v1 Secret': (data) => new Secret(data),
  'policy/v1 PodDisruptionBudget': (data) => new PodDisruptionBudget(data),
  'autoscaling/v2 HorizontalPodAutoscaler': (data) => new HorizontalPodAutoscaler(data),
  'networking.k8s.io/v1 Ingress': (data) => new Ingress(data),
  'keda.sh/v1alpha1 ScaledObject': (data) => new ScaledObject(data),
};

function validateObject(object: KubeObject): void {
  const key = `${object.apiVersion} ${object.kind}`;
  const model = MODELS[key];
  if (model === undefined) throw new Error(`no schema to validate ${key} against; add its model to MODELS`);
  model(object).validate();
}

/** kustomize's own file, not an API object: the fields used here, and no others (a typo fails). */
const kustomizationSchema = z.strictObject({
  apiVersion: z.literal('kustomize.config.k8s.io/v1beta1'),
  kind: z.literal('Kustomization'),
  resources: z.array(z.string().min(1)).min(1),
  images: z
    .array(z.strictObject({ name: z.string().min(1), newName: z.string().min(1).optional(), newTag: z.string().min(1).optional(), digest: z.string().min(1).optional() }))
    .optional(),
});

/** Every document of a file. YAML 1.1 rules, as kubectl reads them (an unquoted `on` is a boolean). */
function parseFile(file: string): unknown[] {
  const documents = parseAllDocuments(readFileSync(join(DIR, file), 'utf8'), { version: '1.1', uniqueKeys: true });
  const objects: unknown[] = [];
  for (const document of documents) {
    const problems = [...document.errors, ...document.warnings];
    if (problems.length > 0) throw new Error(`${file}: ${problems.map((problem) => problem.message).join('; ')}`);
    const object: unknown = document.toJS();
    if (object === null || typeof object !== 'object') throw new Error(`${file}: a document that is not an object`);
    objects.push(object);
  }
  if (objects.length === 0) throw new Error(`${file}: no documents`);
  return objects;
}

const yamlFiles = readdirSync(DIR)
  .filter((name) => /\.ya?ml$/.test(name))
  .sort();
const kustomizationText = readFileSync(join(DIR, 'kustomization.yaml'), 'utf8');
const kustomization = kustomizationSchema.parse(parseFile('kustomization.yaml')[0]);
const manifests: Manifest[] = yamlFiles
  .filter((file) => file !== 'kustomization.yaml')
  .flatMap((file) => parseFile(file).map((object) => ({ file, object: object as KubeObject })));

function only(kind: string, file?: string): KubeObject {
  const found = manifests.filter((manifest) => manifest.object.kind === kind && (file === undefined || manifest.file === file));
  if (found.length !== 1) throw new Error(`expected one ${kind}${file ? ` in ${file}` : ''}, found ${found.length}`);
  return (found[0] as Manifest).object;
}

const deployment = only('Deployment');
const podSpec = deployment.spec.template.spec;
const container = podSpec.containers[0];
const podLabels: Record<string, string> = deployment.spec.template.metadata.labels;
const exampleSecret = only('Secret', 'secret.example.yaml');
const exampleSecretData: Record<string, string> = exampleSecret.stringData;

/** The final stage of docker/Dockerfile: its ENV, its CMD and the uid it runs as. */
const dockerfile = read('docker/Dockerfile');
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const imageEnv: Record<string, string> = Object.fromEntries(
  [...runtimeStage.replace(/\\\n/g, ' ').matchAll(/^ENV (.+)$/gm)].flatMap((match) =>
    (match[1] as string)
      .trim()
      .split(/\s+/)
      .map((pair) => pair.split('=', 2) as [string, string]),
  ),
);
const imageCmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtimeStage)?.[1] ?? 'null') as string[] | null;
const imageUid = Number(/--uid (\d+)/.exec(runtimeStage)?.[1]);

/** The Deployment's env, with the example Secret's values where it reads the Secret. */
const literalEnv: Record<string, string> = {};
const secretRefs: Array<{ env: string; name: string; key: string; optional: boolean }> = [];
for (const entry of container.env as Array<{ name: string; value?: string; valueFrom?: any }>) {
  if (entry.value !== undefined) literalEnv[entry.name] = entry.value;
  const ref = entry.valueFrom?.secretKeyRef;
  if (ref !== undefined) secretRefs.push({ env: entry.name, name: ref.name, key: ref.key, optional: ref.optional === true });
}
const containerEnv: Record<string, string> = {
  ...imageEnv,
  ...literalEnv,
  ...Object.fromEntries(secretRefs.filter((ref) => exampleSecretData[ref.key] !== undefined).map((ref) => [ref.env, exampleSecretData[ref.key] as string])),
};

/** What the server registers at start-up: prom-client's defaults, the call series and the live-call gauges. */
function registeredMetricNames(): string[] {
  const metrics = new MetricsRegistry(new ClusterLink());
  new CallMetrics(metrics);
  new LiveCallMetrics(metrics, {} as never, new ServerDrain());
  return metrics.registry.getMetricsAsArray().map((metric) => metric.name);
}

function containerPortOf(port: number | string): number | undefined {
  const ports = container.ports as Array<{ name?: string; containerPort: number }>;
  return typeof port === 'number' ? ports.find((entry) => entry.containerPort === port)?.containerPort : ports.find((entry) => entry.name === port)?.containerPort;
}

function selects(selector: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => podLabels[key] === value);
}

describe('docker/kubernetes/', () => {
  it('every object in every file passes its Kubernetes or KEDA schema', () => {
    const failures: string[] = [];
    for (const { file, object } of manifests) {
      try {
        validateObject(object);
      } catch (error) {
        failures.push(`${file} (${object.kind} ${object.metadata?.name}): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(manifests.map(({ object }) => object.kind).sort()).toEqual(
      ['Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'PodDisruptionBudget', 'ScaledObject', 'Secret', 'Service'].sort(),
    );
  });

  it('the validation rejects a broken object and a kind it has no schema for', () => {
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = '3000';
    expect(() => validateObject(broken)).toThrow(/containerPort must be integer/);

    const keda = structuredClone(only('ScaledObject'));
    keda.spec.triggers[0].metadata.threshold = 100;
    expect(() => validateObject(keda)).toThrow(/threshold must be string/);

    const hpa = structuredClone(only('HorizontalPodAutoscaler'));
    delete hpa.spec.scaleTargetRef;
    expect(() => validateObject(hpa)).toThrow(/scaleTargetRef/);

    expect(() => validateObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'switchboard' } })).toThrow(/no schema/);
    // An object whose apiVersion is not the one its model is for is not quietly validated as that model.
    expect(() => validateObject({ ...deployment, apiVersion: 'apps/v1beta1' })).toThrow(/no schema/);
  });

  it('kustomization.yaml lists every manifest but the optional ones, which say why they are left out', () => {
    expect([...kustomization.resources].sort()).toEqual(yamlFiles.filter((file) => file !== 'kustomization.yaml' && !OPTIONAL_FILES.includes(file)));
    for (const file of OPTIONAL_FILES) {
      expect(yamlFiles).toContain(file);
      expect(kustomizationText).toMatch(new RegExp(`^#.*\\b${file.replace(/\./g, '\\.')}\\b`, 'm'));
      expect(readFileSync(join(DIR, file), 'utf8').slice(0, 400)).toMatch(/NOT listed in kustomization\.yaml/);
    }
    // What is applied carries no placeholder that would deploy as it is.
    const applied = manifests.filter((manifest) => kustomization.resources.includes(manifest.file));
    expect(applied.filter(({ object }) => /replace-|example\.(com|internal)/i.test(JSON.stringify(object))).map(({ file }) => file)).toEqual([]);
    // The image entry rewrites the image the Deployment names.
    expect(kustomization.images?.map((image) => image.name)).toEqual([container.image]);
  });

  it("runs the image's CMD as its user, with the env the config schema knows and accepts", () => {
    expect(podSpec.containers).toHaveLength(1);
    // No command or args: the Dockerfile's exec-form CMD starts node itself, so SIGTERM reaches the server.
    expect(imageCmd).toEqual(['node', 'dist/apps/server/apps/server/src/main.js']);
    const argv = [...(container.command ?? []), ...(container.args ?? [])];
    if (argv.length > 0) expect(argv).toEqual(imageCmd);

    expect(imageUid).toBe(10001);
    expect(podSpec.securityContext.runAsNonRoot).toBe(true);
    expect(podSpec.securityContext.runAsUser).toBe(imageUid);

    const known = Object.keys(environmentSchema.shape);
    const envNames = (container.env as Array<{ name: string }>).map((entry) => entry.name);
    expect(envNames.filter((name) => !known.includes(name))).toEqual([]);
    expect(new Set(envNames).size).toBe(envNames.length);
    expect(container.envFrom).toBeUndefined();
    for (const name of ['PUBLIC_BASE_URL', 'TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'ADMIN_API_KEY', 'SECRETS_ENCRYPTION_KEY', 'DATABASE_URL', 'REDIS_URL', 'METRICS_TOKEN', 'WORKERS', 'DRAIN_TIMEOUT_S']) {
      expect([name, envNames.includes(name)]).toEqual([name, true]);
    }

    // Secrets come from the Secret secret.example.yaml shows; every key it shows is a setting, and
    // every key the Deployment requires is in it.
    expect(new Set(secretRefs.map((ref) => ref.name))).toEqual(new Set([exampleSecret.metadata.name]));
    expect(secretRefs.every((ref) => ref.env === ref.key)).toBe(true);
    expect(Object.keys(exampleSecretData).filter((key) => !known.includes(key))).toEqual([]);
    expect(secretRefs.filter((ref) => !ref.optional && exampleSecretData[ref.key] === undefined)).toEqual([]);
    expect(Object.keys(exampleSecretData).filter((key) => !secretRefs.some((ref) => ref.key === key))).toEqual([]);

    // The pod's whole environment (image, Deployment, example Secret) passes start-up validation.
    const config = loadAppConfig(containerEnv);
    expect(config.nodeEnv).toBe('production');
    expect(config.workers).toBe(1);
    expect(config.metricsToken).toBeDefined();
    expect(config.redisUrl).toBeDefined();
    expect(config.database.url).toBeDefined();
  });

  it('probes /health and /health/ready on the port the server listens on', () => {
    const port = Number(containerEnv['PORT']);
    expect(literalEnv['PORT']).toBe(String(port));
    expect(loadAppConfig(containerEnv).port).toBe(port);
    expect(container.ports.map((entry: { containerPort: number }) => entry.containerPort)).toEqual([port]);

    const probes = { startupProbe: '/health', livenessProbe: '/health', readinessProbe: '/health/ready' };
    for (const [probe, path] of Object.entries(probes)) {
      const httpGet = container[probe]?.httpGet;
      expect([probe, httpGet?.path, containerPortOf(httpGet?.port)]).toEqual([probe, path, port]);
    }

    // Start-up may run the migration CLI; the startup probe must outlast that CLI's own bound.
    const migrationBoundMs = Number(/const DEFAULT_TIMEOUT_MS = ([\d_]+);/.exec(read('libs/persistence/src/migrations.ts'))?.[1]?.replace(/_/g, ''));
    expect(migrationBoundMs).toBeGreaterThan(0);
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold).toBeGreaterThan(migrationBoundMs / 1000);
  });

  it("the grace period outlasts the drain, its message and the shutdown bound", () => {
    const drainS = Number(literalEnv['DRAIN_TIMEOUT_S']);
    expect(drainS).toBeGreaterThan(0);
    const config = loadAppConfig(containerEnv);
    expect(config.drain.timeoutMs).toBe(drainS * 1000);
    // A cluster primary (WORKERS > 1) waits this much longer than its workers.
    const primaryMarginMs = Number(/const PRIMARY_SHUTDOWN_MARGIN_MS = ([\d_]+);/.exec(read('apps/server/src/main.ts'))?.[1]?.replace(/_/g, ''));
    expect(primaryMarginMs).toBeGreaterThan(0);
    const processBoundS = drainS + DRAIN_MESSAGE_GRACE_MS / 1000 + config.shutdownTimeoutMs / 1000 + (config.workers > 1 ? primaryMarginMs / 1000 : 0);
    // SIGTERM starts the server's own drain. A preStop hook (none by default: see the comment in
    // deployment.yaml) may only sleep, and its time comes out of the same grace period.
    const preStop = container.lifecycle?.preStop;
    if (preStop !== undefined) expect(Object.keys(preStop)).toEqual(['sleep']);
    const preStopS: number = preStop?.sleep?.seconds ?? 0;
    expect(podSpec.terminationGracePeriodSeconds).toBeGreaterThan(preStopS + processBoundS);
  });

  it('rolls out without losing capacity, on a read-only root with writable DATA_DIR and /tmp', () => {
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });

    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
    const volumes = new Map((podSpec.volumes as Array<{ name: string }>).map((volume) => [volume.name, volume]));
    const writable = (container.volumeMounts as Array<{ name: string; mountPath: string; readOnly?: boolean }>)
      .filter((mount) => mount.readOnly !== true && volumes.has(mount.name))
      .map((mount) => mount.mountPath);
    expect(writable).toEqual(expect.arrayContaining([loadAppConfig(containerEnv).database.dataDir, '/tmp']));

    const requests = container.resources.requests;
    const limits = container.resources.limits;
    expect([requests.cpu, requests.memory, limits.cpu, limits.memory].every((value) => typeof value === 'string')).toBe(true);
  });

  it("the Deployment's, the Service's and the budget's selectors match the pod template's labels", () => {
    expect(selects(deployment.spec.selector.matchLabels)).toBe(true);
    const service = only('Service');
    expect(selects(service.spec.selector)).toBe(true);
    for (const port of service.spec.ports) expect(containerPortOf(port.targetPort)).toBe(Number(containerEnv['PORT']));

    const budget = only('PodDisruptionBudget');
    expect(selects(budget.spec.selector.matchLabels)).toBe(true);
    expect(budget.spec.maxUnavailable).toBe(1);

    const ingress = only('Ingress');
    for (const rule of ingress.spec.rules) {
      for (const path of rule.http.paths) {
        expect(path.backend.service.name).toBe(service.metadata.name);
        expect(service.spec.ports.map((port: { name: string }) => port.name)).toContain(path.backend.service.port.name);
      }
    }
  });

  it('the HPA and the KEDA alternative scale the Deployment on a metric the server registers, the same way', () => {
    const registered = registeredMetricNames();
    expect(registered).toEqual(expect.arrayContaining(['switchboard_live_calls', 'switchboard_draining', 'switchboard_call_admissions_total', 'nodejs_eventloop_lag_p99_seconds']));
    const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name };

    const hpa = only('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual(target);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    expect(hpa.spec.metrics).toHaveLength(1);
    const [metric] = hpa.spec.metrics;
    expect(metric.type).toBe('Pods');
    expect(registered).toContain(metric.pods.metric.name);
    expect(metric.pods.target.type).toBe('AverageValue');
    const scaleDown = hpa.spec.behavior.scaleDown;
    expect(scaleDown.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    expect(scaleDown.policies).toEqual([expect.objectContaining({ type: 'Pods', value: 1 })]);

    const keda = only('ScaledObject');
    expect(keda.spec.scaleTargetRef).toEqual(target);
    expect([keda.spec.minReplicaCount, keda.spec.maxReplicaCount]).toEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas]);
    expect(keda.spec.advanced.horizontalPodAutoscalerConfig.behavior).toEqual(hpa.spec.behavior);
    expect(keda.spec.triggers).toHaveLength(1);
    const [trigger] = keda.spec.triggers;
    expect(trigger.type).toBe('prometheus');
    expect(trigger.metricType).toBe('AverageValue');
    expect(trigger.metadata.threshold).toBe(String(metric.pods.target.averageValue));
    const queried = trigger.metadata.query.match(/\b(?:switchboard|nodejs|process)_[a-z0-9_]+/g) ?? [];
    expect(queried).toContain(metric.pods.metric.name);
    expect(queried.filter((name: string) => !registered.includes(name))).toEqual([]);
    expect(trigger.metadata.query).toMatch(/^sum\(/);
  });
});
