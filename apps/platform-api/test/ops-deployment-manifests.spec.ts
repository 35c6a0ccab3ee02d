import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';

const run = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');

/** The longest job of any worker: one SMTP delivery, bounded by its timeouts (15 s + 15 s + 60 s). */
const LONGEST_JOB_SECONDS = 90;

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
};

const APPS = {
  platform: {
    api: 'platform-api',
    worker: 'platform-worker',
    config: 'platform-config',
    secret: 'platform-secrets',
    portVar: 'PLATFORM_PORT',
    metricsVar: 'PLATFORM_WORKER_METRICS_PORT',
    source: 'apps/platform-api/src/config/platform-config.ts',
  },
  mail: {
    api: 'mail-api',
    worker: 'mail-worker',
    config: 'mail-config',
    secret: 'mail-secrets',
    portVar: 'MAIL_PORT',
    metricsVar: 'MAIL_WORKER_METRICS_PORT',
    source: 'apps/mail-api/src/config/mail-config.ts',
  },
} as const;

/** The variables of the configuration reference (docs/configuration.md): its `## platform-api` and `## mail-api` tables. */
function documentedVariables(): Record<'platform' | 'mail', Set<string>> {
  const sections = read('docs/configuration.md').split('\n## ');
  const variablesOf = (app: string) => {
    const section = sections.find((s) => s.startsWith(`${app}\n`)) ?? '';
    return new Set([...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((match) => match[1]));
  };
  const vars = { platform: variablesOf('platform-api'), mail: variablesOf('mail-api') };
  // A reference the parser cannot read must not pass as "nothing to check".
  expect({ platform: vars.platform.size > 20, mail: vars.mail.size > 20 }).toEqual({ platform: true, mail: true });
  return vars;
}

/** `NAME = 3000` in an app's env schema: the default the code applies. */
function defaultOf(source: string, name: string): string | undefined {
  return new RegExp(`\\b${name}\\s*=\\s*([^;]+);`).exec(read(source))?.[1].trim();
}

describe('deployment manifests (k8s/) and images (docker/)', () => {
  let rendered: { targets: Record<string, K8sObject[]>; templates: K8sObject[] };
  let validation: string;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'ops-manifests-'));

  beforeAll(async () => {
    const out = path.join(tmp, 'rendered.json');
    const { stdout } = await run(process.execPath, ['scripts/validate-k8s.mjs', '--json', out], { cwd: REPO });
    validation = stdout;
    rendered = JSON.parse(readFileSync(out, 'utf8'));
  }, 60_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const all = () => Object.entries(rendered.targets);
  const find = (objects: K8sObject[], kind: string, name: string) => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!found) throw new Error(`no ${kind}/${name}`);
    return found;
  };
  /** A generated ConfigMap (configMapGenerator): its name is `<name>-<hash of its data>`. */
  const findConfig = (objects: K8sObject[], name: string) => {
    const found = objects.filter((o) => o.kind === 'ConfigMap' && new RegExp(`^${name}-[0-9a-z]{10}$`).test(o.metadata.name));
    if (found.length !== 1) throw new Error(`${found.length} generated ConfigMaps ${name}-<hash>`);
    return found[0];
  };

  it('renders the base and every overlay, every object valid against the Kubernetes schemas, unknown fields refused', () => {
    expect(Object.keys(rendered.targets)).toEqual(['base', 'dev', 'production', 'production-keda']);
    expect(validation).toMatch(/^all \d+ objects valid \(kubernetes-models [\d.]+ schemas; strict: no unknown fields\)$/m);
    // With kubectl on the machine, `kubectl kustomize` renders every target exactly as our renderer does.
    expect(validation).toMatch(
      /^(kubectl kustomize renders every target the same|kubectl not found: not compared with kubectl kustomize)$/m,
    );
  });

  it('runs each API and worker with probes on /readyz and /healthz, requests and limits, and a restricted security context', () => {
    for (const [target, objects] of all()) {
      for (const app of Object.values(APPS)) {
        const config = findConfig(objects, app.config).data ?? {};
        for (const [name, role] of [
          [app.api, 'api'],
          [app.worker, 'worker'],
        ] as const) {
          const deployment = find(objects, 'Deployment', name);
          const pod = deployment.spec.template.spec;
          const [container] = pod.containers;
          const where = `${target} ${name}`;
          expect({ where, args: container.args }).toEqual({ where, args: [role] });
          const port = container.ports.find((p: { name: string }) => p.name === container.readinessProbe.httpGet.port);
          expect({ where, port: String(port?.containerPort) }).toEqual({
            where,
            port: config[role === 'api' ? app.portVar : app.metricsVar],
          });
          expect({ where, ready: container.readinessProbe.httpGet.path, live: container.livenessProbe.httpGet.path }).toEqual({
            where,
            ready: '/readyz',
            live: '/healthz',
          });
          for (const kind of ['requests', 'limits']) {
            expect({ where, kind, keys: Object.keys(container.resources[kind]).sort() }).toEqual({ where, kind, keys: ['cpu', 'memory'] });
          }
          expect({ where, pod: pod.securityContext }).toMatchObject({ where, pod: { runAsNonRoot: true, runAsUser: 10001 } });
          expect({ where, container: container.securityContext }).toEqual({
            where,
            container: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          });
          // The writable data volume at DATA_DIR, and /tmp, on the read-only root filesystem.
          const mounts = container.volumeMounts.map((m: { mountPath: string }) => m.mountPath).sort();
          expect({ where, mounts }).toEqual({ where, mounts: [config.DATA_DIR, '/tmp'].sort() });
          expect({ where, envFrom: container.envFrom }).toEqual({
            where,
            envFrom: [{ configMapRef: { name: findConfig(objects, app.config).metadata.name } }, { secretRef: { name: app.secret } }],
          });
          expect({ where, annotations: deployment.spec.template.metadata.annotations }).toEqual({
            where,
            annotations: {
              'prometheus.io/scrape': 'true',
              'prometheus.io/port': String(port?.containerPort),
              'prometheus.io/path': '/metrics',
            },
          });
          expect(pod.automountServiceAccountToken).toBe(false);
          // Workers finish their active jobs on SIGTERM: the grace period outlasts the longest job.
          const grace = pod.terminationGracePeriodSeconds;
          if (role === 'worker') expect({ where, grace: grace > LONGEST_JOB_SECONDS }).toEqual({ where, grace: true });
          // APIs: the preStop pause, then the drain, within the grace period. The pause is the kubelet's
          // sleep action: the distroless image has no shell or `sleep` binary an exec hook could run.
          if (role === 'api') {
            expect(container.lifecycle.preStop).toEqual({ sleep: { seconds: expect.any(Number) } });
            expect({ where, grace: grace > container.lifecycle.preStop.sleep.seconds + 30 }).toEqual({ where, grace: true });
          }
          expect({ where, exec: JSON.stringify(container).includes('"exec"') }).toEqual({ where, exec: false });
        }
      }
    }
  });

  it('has a Service per API, an HPA and a PDB per Deployment, and the migrate Jobs before the rollout', () => {
    for (const [target, objects] of all()) {
      for (const app of Object.values(APPS)) {
        const service = find(objects, 'Service', app.api);
        expect({ target, selector: service.spec.selector, port: service.spec.ports[0].targetPort }).toEqual({
          target,
          selector: { 'app.kubernetes.io/name': app.api },
          port: 'http',
        });
        for (const name of [app.api, app.worker]) {
          const deployment = find(objects, 'Deployment', name);
          // The HPA owns the replica count: a re-apply must not reset it.
          expect({ name, replicas: deployment.spec.replicas }).toEqual({ name, replicas: undefined });
          // With the KEDA component the workers' ScaledObject replaces their CPU HPA (KEDA creates its own).
          const scaled = objects.find((o) => o.kind === 'ScaledObject' && o.metadata.name === name);
          if (scaled) {
            expect(scaled.spec.scaleTargetRef).toEqual({ name });
            expect(objects.some((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === name)).toBe(false);
          } else {
            const hpa = find(objects, 'HorizontalPodAutoscaler', name);
            expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
            expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
          }
          const pdb = find(objects, 'PodDisruptionBudget', name);
          expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
          expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
        }
        const job = find(objects, 'Job', `${app.api.replace('-api', '')}-migrate`);
        const [container] = job.spec.template.spec.containers;
        expect(container.args).toEqual(['migrate']);
        expect(container.image).toBe(find(objects, 'Deployment', app.api).spec.template.spec.containers[0].image);
        expect(job.spec.template.spec.restartPolicy).toBe('Never');
        expect(job.metadata.annotations?.['argocd.argoproj.io/hook']).toBe('Sync');
        expect(job.metadata.labels?.['app.kubernetes.io/component']).toBe('migrate');
      }
    }
    // The dev overlay: its own namespace and image tags, one replica of each, and the dependencies.
    const dev = rendered.targets.dev;
    expect(
      dev.filter((o) => o.kind !== 'Namespace').every((o) => (o.metadata as { namespace?: string }).namespace === 'backoffice-dev'),
    ).toBe(true);
    const images = dev.flatMap((o) =>
      o.kind === 'Deployment' || o.kind === 'Job' ? o.spec.template.spec.containers.map((c: { image: string }) => c.image) : [],
    );
    expect(images.filter((i: string) => i.includes('backoffice/')).every((i: string) => i.endsWith(':dev'))).toBe(true);
    expect(find(dev, 'HorizontalPodAutoscaler', 'mail-worker').spec.minReplicas).toBe(1);
    for (const name of ['postgres', 'redis', 'mailpit']) find(dev, 'Service', name);
  });

  it('orders itself in sync waves: everything the migrate Jobs read comes in an earlier wave, the Deployments after them', () => {
    const wave = (o: K8sObject) => Number(o.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 'NaN');
    for (const [target, objects] of all()) {
      for (const o of objects)
        expect({ target, object: `${o.kind}/${o.metadata.name}`, wave: Number.isInteger(wave(o)) }).toMatchObject({ wave: true });
      for (const app of Object.values(APPS)) {
        const job = find(objects, 'Job', `${app.api.replace('-api', '')}-migrate`);
        const pod = job.spec.template.spec;
        // Everything the Job names: its ServiceAccount, ConfigMaps and Secrets, and (dev) the database it migrates.
        const referenced = [
          ['ServiceAccount', pod.serviceAccountName],
          ...pod.containers.flatMap((c: { envFrom: { configMapRef?: { name: string }; secretRef?: { name: string } }[] }) =>
            c.envFrom.map((e) => (e.configMapRef ? ['ConfigMap', e.configMapRef.name] : ['Secret', e.secretRef?.name])),
          ),
          ...objects
            .filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'dependency')
            .map((o) => [o.kind, o.metadata.name]),
        ] as [string, string][];
        for (const [kind, name] of referenced) {
          // Secrets are applied by hand in the base (the template) and come from ExternalSecrets in production.
          const source =
            objects.find((o) => o.kind === kind && o.metadata.name === name) ??
            objects.find((o) => o.kind === 'ExternalSecret' && o.spec.target.name === name) ??
            find(rendered.templates, kind, name);
          expect({ target, job: job.metadata.name, ref: `${kind}/${name}`, earlier: wave(source) < wave(job) }).toMatchObject({
            earlier: true,
          });
        }
        for (const name of [app.api, app.worker]) {
          expect({ target, name, after: wave(find(objects, 'Deployment', name)) > wave(job) }).toMatchObject({ after: true });
        }
      }
    }
  });

  it('generates the ConfigMaps with a hash of their data in the name: a config change is a new ConfigMap and a new pod template for exactly the pods that read it', async () => {
    // An edited copy of k8s/: one mail value changed in the base.
    const copy = path.join(tmp, 'k8s-edited');
    cpSync(path.join(REPO, 'k8s'), copy, { recursive: true });
    const envFile = path.join(copy, 'base/config/mail.env');
    const original = readFileSync(envFile, 'utf8');
    const edited = original.replace(/^MAIL_RATE_PER_SECOND=.*$/m, 'MAIL_RATE_PER_SECOND=15');
    expect(edited).not.toBe(original);
    writeFileSync(envFile, edited);
    const podTemplate = (objects: K8sObject[], kind: string, name: string) => JSON.stringify(find(objects, kind, name).spec.template);
    const out = path.join(tmp, 'rendered-edited.json');
    await run(process.execPath, ['scripts/validate-k8s.mjs', '--k8s', copy, '--json', out, '--render-only'], { cwd: REPO });
    const edits = JSON.parse(readFileSync(out, 'utf8')) as typeof rendered;
    expect(Object.keys(edits.targets)).toEqual(Object.keys(rendered.targets));
    for (const [target, after] of Object.entries(edits.targets)) {
      const before = rendered.targets[target];
      const [mailBefore, mailAfter] = [findConfig(before, 'mail-config'), findConfig(after, 'mail-config')];
      expect({ target, renamed: mailAfter.metadata.name !== mailBefore.metadata.name }).toEqual({ target, renamed: true });
      expect(mailAfter.data?.MAIL_RATE_PER_SECOND).toBe('15');
      // Every mail pod reads the new ConfigMap (so the Deployments roll and the Job is a new one)...
      for (const [kind, name] of [
        ['Deployment', 'mail-api'],
        ['Deployment', 'mail-worker'],
        ['Job', 'mail-migrate'],
      ]) {
        const template = podTemplate(after, kind, name);
        expect({ target, name, reads: template.includes(`"${mailAfter.metadata.name}"`) }).toEqual({ target, name, reads: true });
        expect({ target, name, same: template === podTemplate(before, kind, name) }).toEqual({ target, name, same: false });
      }
      // ...and the platform's ConfigMap and pods are untouched.
      expect(findConfig(after, 'platform-config').metadata.name).toBe(findConfig(before, 'platform-config').metadata.name);
      for (const name of ['platform-api', 'platform-worker']) {
        expect({ target, name, same: podTemplate(after, 'Deployment', name) === podTemplate(before, 'Deployment', name) }).toEqual({
          target,
          name,
          same: true,
        });
      }
    }
  }, 30_000);

  it('production: images by digest, zone spread, restricted PSA, PodMonitors with METRICS_TOKEN, alert rules; dev pulls mutable tags always', () => {
    const production = rendered.targets.production;
    const namespace = find(production, 'Namespace', 'backoffice');
    expect(namespace.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
    for (const app of Object.values(APPS)) {
      for (const [name, port] of [
        [app.api, 'http'],
        [app.worker, 'metrics'],
      ]) {
        const pod = find(production, 'Deployment', name).spec.template.spec;
        expect(pod.containers[0].image).toMatch(/^registry\.example\.com\/backoffice\/[a-z-]+@sha256:[0-9a-f]{64}$/);
        expect(pod.topologySpreadConstraints.map((c: { topologyKey: string }) => c.topologyKey).sort()).toEqual([
          'kubernetes.io/hostname',
          'topology.kubernetes.io/zone',
        ]);
        for (const c of pod.topologySpreadConstraints) expect(c.labelSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': name });
        // Scraped on the container's named port with the app's METRICS_TOKEN (the same Secret key the app reads).
        const monitor = find(production, 'PodMonitor', name);
        expect(monitor.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': name });
        expect(pod.containers[0].ports.map((p: { name: string }) => p.name)).toContain(port);
        expect(monitor.spec.podMetricsEndpoints).toEqual([
          expect.objectContaining({
            port,
            path: '/metrics',
            authorization: { type: 'Bearer', credentials: { name: app.secret, key: 'METRICS_TOKEN' } },
          }),
        ]);
        expect(Object.keys(find(rendered.templates, 'Secret', app.secret).stringData ?? {})).toContain('METRICS_TOKEN');
      }
      const job = find(production, 'Job', `${app.api.replace('-api', '')}-migrate`);
      expect(job.spec.template.spec.containers[0].image).toBe(
        find(production, 'Deployment', app.api).spec.template.spec.containers[0].image,
      );
    }
    const rules = find(production, 'PrometheusRule', 'backoffice').spec.groups.flatMap((g: { rules: { expr: string }[] }) => g.rules);
    const exprs = rules.map((r: { expr: string }) => r.expr).join('\n');
    for (const metric of [
      'bullmq_queue_oldest_waiting_seconds',
      'bullmq_job_failures_total',
      'status_code=~"5.."',
      'histogram_quantile(0.99',
      'mail_relay_throttle_pauses_total',
    ]) {
      expect(exprs).toContain(metric);
    }
    expect(find(production, 'Service', 'mail-worker-inbound').spec.type).toBe('LoadBalancer');
    // The bounce listener's container port is the one the worker is configured to listen on.
    for (const [target, objects] of all()) {
      const inboundPort = findConfig(objects, 'mail-config').data?.MAIL_INBOUND_SMTP_PORT;
      const ports = find(objects, 'Deployment', 'mail-worker').spec.template.spec.containers[0].ports;
      expect({ target, port: String(ports.find((p: { name: string }) => p.name === 'smtp-inbound')?.containerPort) }).toEqual({
        target,
        port: inboundPort,
      });
      expect(find(objects, 'Service', 'mail-worker-inbound').spec.ports[0].targetPort).toBe('smtp-inbound');
    }
    // Dev runs mutable `dev` tags: always pulled.
    for (const o of rendered.targets.dev.filter(
      (x) => (x.kind === 'Deployment' || x.kind === 'Job') && x.metadata.name.match(/^(platform|mail)-/),
    )) {
      expect({ name: o.metadata.name, policy: o.spec.template.spec.containers[0].imagePullPolicy }).toEqual({
        name: o.metadata.name,
        policy: 'Always',
      });
    }
  });

  it('KEDA component: each worker scales on the oldest-waiting age of each of its queues, CPU as fallback, no second HPA', () => {
    const keda = rendered.targets['production-keda'];
    const queueNames = (source: string) => [...read(source).matchAll(/export const \w+_QUEUE = '([a-z-]+)'/g)].map((m) => m[1]);
    for (const [name, app] of [
      ['mail-worker', 'mail-api'],
      ['platform-worker', 'platform-api'],
    ]) {
      const scaled = find(keda, 'ScaledObject', name);
      const triggers = scaled.spec.triggers as { type: string; metadata: { query?: string; value?: string } }[];
      const queues = triggers.filter((t) => t.type === 'prometheus').map((t) => /queue="([^"]+)"/.exec(t.metadata.query ?? '')?.[1]);
      for (const t of triggers.filter((x) => x.type === 'prometheus'))
        expect(t.metadata.query).toMatch(/^max\(bullmq_queue_oldest_waiting_seconds\{queue="[a-z-]+"\}\)$/);
      // Every queue of the app whose name starts with the app prefix (the ones its worker consumes and exports).
      const prefix = `${app.replace('-api', '')}-`;
      const declared = execQueues(app).filter((q) => q.startsWith(prefix));
      expect({ name, queues: [...queues].sort() }).toEqual({ name, queues: declared.sort() });
      expect(triggers.at(-1)).toEqual({ type: 'cpu', metricType: 'Utilization', metadata: { value: '70' } });
      expect(scaled.spec.fallback.replicas).toBeGreaterThanOrEqual(1);
      expect(keda.some((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === name)).toBe(false);
    }
    function execQueues(app: string): string[] {
      const dir = path.join(REPO, 'apps', app, 'src');
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.queue.ts'));
      return [...new Set(files.flatMap((f) => queueNames(path.join('apps', app, 'src', f))))];
    }
    // The other targets keep the CPU HPAs.
    find(rendered.targets.production, 'HorizontalPodAutoscaler', 'mail-worker');
  });

  it('opens the product paths only on the Ingress, and fences the pods with NetworkPolicies', () => {
    // The first path segment of every @Controller('...') of an app: its product route prefixes.
    const controllerPrefixes = (app: string) => {
      const dir = path.join(REPO, 'apps', app, 'src');
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.controller.ts'));
      const texts = files.map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
      return new Set([...texts.matchAll(/@Controller\(\s*['"`]([^'"`/]+)/g)].map((m) => `/${m[1]}`));
    };
    for (const [target, objects] of all()) {
      const ingress = find(objects, 'Ingress', 'backoffice');
      for (const rule of ingress.spec.rules) {
        const service = rule.http.paths[0].backend.service.name as string;
        const prefixes = controllerPrefixes(service);
        for (const p of rule.http.paths) {
          expect({ target, path: p.path, product: prefixes.has(p.path), service: p.backend.service.name }).toEqual({
            target,
            path: p.path,
            product: true,
            service,
          });
        }
        for (const op of ['/metrics', '/admin', '/docs', '/openapi.json', '/healthz', '/readyz', '/']) {
          expect(rule.http.paths.map((p: { path: string }) => p.path)).not.toContain(op);
        }
      }
      const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
      const deny = find(objects, 'NetworkPolicy', 'backoffice-default-deny');
      expect(deny.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(deny.spec.ingress ?? []).toEqual([]);
      expect(deny.spec.egress ?? []).toEqual([]);
      for (const app of Object.values(APPS)) {
        for (const name of [app.api, app.worker, `${app.api.replace('-api', '')}-migrate`]) {
          expect(deny.spec.podSelector.matchExpressions[0].values).toContain(name);
        }
      }
      // Who may reach the APIs: the ingress controller and monitoring namespaces only (plus the platform to the mail-api).
      const apis = find(objects, 'NetworkPolicy', 'backoffice-apis-ingress');
      expect(apis.spec.ingress[0].from.map((f: any) => f.namespaceSelector.matchLabels['kubernetes.io/metadata.name']).sort()).toEqual([
        'ingress-nginx',
        'monitoring',
      ]);
      expect(find(objects, 'NetworkPolicy', 'mail-worker-inbound-smtp').spec.ingress).toEqual([{ ports: [{ port: 'smtp-inbound' }] }]);
      // Egress: only DNS, Postgres, Redis, SMTP, HTTP(S) (AI provider, S3, webhooks) and the mail-api.
      const ports = policies.flatMap((o) => (o.spec.egress ?? []).flatMap((e: any) => (e.ports ?? []).map((p: any) => p.port)));
      expect([...new Set(ports)].sort()).toEqual([1025, 25, 443, 465, 5432, 53, 587, 6379, 80, 'http'].sort());
    }
  });

  it('has every documented variable (docs/configuration.md) in a ConfigMap or the Secret template of its app, and no variable the app does not read', () => {
    const documented = documentedVariables();
    const base = rendered.targets.base;
    for (const [key, app] of Object.entries(APPS) as [keyof typeof APPS, (typeof APPS)[keyof typeof APPS]][]) {
      const configKeys = Object.keys(findConfig(base, app.config).data ?? {});
      const secretKeys = Object.keys(find(rendered.templates, 'Secret', app.secret).stringData ?? {});
      const keys = new Set([...configKeys, ...secretKeys]);
      expect({ app: key, missing: [...documented[key]].filter((v) => !keys.has(v)) }).toEqual({ app: key, missing: [] });
      const source = read(app.source);
      expect({ app: key, unknown: [...keys].filter((k) => !source.includes(k)) }).toEqual({ app: key, unknown: [] });
      expect({ app: key, both: configKeys.filter((k) => secretKeys.includes(k)) }).toEqual({ app: key, both: [] });
      // The dev overlay's secret has the template's keys.
      expect(Object.keys(find(rendered.targets.dev, 'Secret', app.secret).stringData ?? {}).sort()).toEqual(secretKeys.sort());
      // The ports the manifests use are the code's defaults (and the images' HEALTHCHECK defaults).
      const config = findConfig(base, app.config).data ?? {};
      expect(config[app.portVar]).toBe(defaultOf(app.source, app.portVar));
      expect(config[app.metricsVar]).toBe(defaultOf(app.source, app.metricsVar));
    }
  });

  it('builds the images on the pinned Node LTS the project declares, runs them distroless as a non-root user under tini, with a HEALTHCHECK', () => {
    const dockerfile = read('docker/Dockerfile');
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
    const pinned = pkg.devDependencies.node.replace(/^[\^~]/, '');
    expect(dockerfile).toContain(`ARG NODE_IMAGE=node:${pinned}-bookworm-slim`);
    expect(pkg.engines.node).toBe('>=24.11 <25');
    expect(pinned).toMatch(/^24\.(1[1-9]|[2-9]\d)\.\d+$/);
    for (const step of [
      /RUN npx --yes turbo@[\d.]+ prune "\$\{APP\}" --docker/,
      /^RUN --mount=type=cache,target=\/root\/\.npm,sharing=locked npm ci$/m,
      /^COPY --from=prune \/app\/tsconfig.base.json \.\/$/m,
      /^RUN --mount=type=cache,target=\/root\/\.npm,sharing=locked npm ci --omit=dev$/m,
      /^RUN node \/tmp\/slim-node-modules.mjs \/app$/m,
      /apt-get install -y --no-install-recommends tini/,
      /^ARG RUNTIME_IMAGE=gcr\.io\/distroless\/cc-debian12$/m,
      /^FROM \$\{RUNTIME_IMAGE\} AS runtime$/m,
      /^COPY --from=runtime-files --chown=10001:10001 \/runtime\/data\/ \/data\/$/m,
      /^USER 10001:10001$/m,
      /^HEALTHCHECK .* CMD \["\/usr\/bin\/node", "\/app\/docker\/healthcheck.mjs"\]$/m,
      /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "\/usr\/bin\/node", "\/app\/docker\/entrypoint.mjs"\]$/m,
    ]) {
      expect(dockerfile).toMatch(step);
    }
    // The runtime stage runs no command: the distroless base has no shell to run one.
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime\n'));
    expect(runtime).not.toMatch(/^RUN /m);
    // The build context leaves out local installs, builds and secrets.
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '.data', '.git', 'docker/.env']) expect(ignored).toContain(entry);
  });

  it('composes Postgres, Redis, an SMTP catcher, both migrations, both APIs and both workers', () => {
    const compose = YAML.parse(read('docker/compose.yaml'), { merge: true }) as { services: Record<string, any> };
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'mail-api',
        'mail-migrate',
        'mail-worker',
        'mailpit',
        'platform-api',
        'platform-migrate',
        'platform-worker',
        'postgres',
        'redis',
      ].sort(),
    );
    for (const app of ['platform', 'mail']) {
      expect(compose.services[`${app}-migrate`].command).toEqual(['migrate']);
      for (const role of ['api', 'worker']) {
        const service = compose.services[`${app}-${role}`];
        expect(service.command).toEqual([role]);
        expect(service.depends_on[`${app}-migrate`]).toEqual({ condition: 'service_completed_successfully' });
        expect(service.depends_on.postgres).toEqual({ condition: 'service_healthy' });
        expect(service.read_only).toBe(true);
        expect(service.environment.NODE_ENV).toBe('production');
        expect(service.build).toMatchObject({ dockerfile: 'docker/Dockerfile', args: { APP: `${app}-api` } });
      }
    }
    // Production mode needs its secrets: compose refuses to start without them (${VAR:?...}).
    expect(compose.services['platform-api'].environment.AUTH_JWT_SECRET).toMatch(/^\$\{AUTH_JWT_SECRET:\?/);
    expect(compose.services['mail-worker'].environment.MAIL_SECRETS_KEY).toMatch(/^\$\{MAIL_SECRETS_KEY:\?/);
    expect(compose.services['mail-worker'].environment.MAIL_SMTP_URL).toBe('smtp://mailpit:1025');
  });

  it('compose: docker/compose-init writes every required secret, fresh and private; APIs on 127.0.0.1; grace periods match the drains', async () => {
    const compose = YAML.parse(read('docker/compose.yaml'), { merge: true }) as { services: Record<string, any> };
    const required = new Set([...read('docker/compose.yaml').matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1]));
    expect(required.size).toBeGreaterThan(5);
    const envs: Record<string, string>[] = [];
    for (const n of [1, 2]) {
      const file = path.join(tmp, `compose-${n}.env`);
      await run(path.join(REPO, 'docker/compose-init'), [file]);
      expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
      envs.push(Object.fromEntries([...readFileSync(file, 'utf8').matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]])));
      // Never overwrites: the data is encrypted and signed with those secrets.
      await expect(run(path.join(REPO, 'docker/compose-init'), [file])).rejects.toThrow(/not overwriting/);
    }
    for (const name of required) {
      expect({ name, set: (envs[0][name] ?? '').length >= 16 }).toEqual({ name, set: true });
      if (name !== 'PLATFORM_BOOTSTRAP_ADMIN_EMAIL')
        expect({ name, fresh: envs[0][name] !== envs[1][name] }).toEqual({ name, fresh: true });
    }
    expect(envs[0].MAIL_SECRETS_KEY).toMatch(/^[0-9a-f]{64}$/);
    expect(envs[0].METRICS_TOKEN.length).toBeGreaterThanOrEqual(24);
    expect(envs[0].MAIL_BOOTSTRAP_SECRET_KEY).toMatch(/^sk_[0-9a-f]{48}$/);
    for (const name of ['platform-api', 'mail-api']) {
      for (const port of compose.services[name].ports) expect(port).toMatch(/^127\.0\.0\.1:/);
    }
    // Compose waits as long as Kubernetes does before killing a service: the drain of each.
    const seconds = (v: string) => Number(/^(\d+)s$/.exec(v)?.[1] ?? Number(/^(\d+)m$/.exec(v)?.[1]) * 60);
    for (const name of ['platform-api', 'platform-worker', 'mail-api', 'mail-worker']) {
      const grace = find(rendered.targets.base, 'Deployment', name).spec.template.spec.terminationGracePeriodSeconds;
      expect({ name, grace: seconds(compose.services[name].stop_grace_period) }).toEqual({ name, grace });
    }
  });

  it('npm run image:check says clearly when the machine has no container engine, and can require one', async () => {
    // Only Node on the PATH: neither podman nor docker can be found.
    const env = { PATH: path.dirname(process.execPath) };
    const { stdout } = await run(process.execPath, ['scripts/image-check.mjs'], { cwd: REPO, env });
    expect(stdout).toMatch(/^image:check: no container engine on this machine .*nothing was built or checked\.$/m);
    await expect(run(process.execPath, ['scripts/image-check.mjs', '--require-engine'], { cwd: REPO, env })).rejects.toMatchObject({
      code: 1,
    });
    const script = read('scripts/image-check.mjs');
    expect(script).toContain("{ app: 'platform-api', budgetMb: 350");
    expect(script).toContain("{ app: 'mail-api', budgetMb: 250");
    expect(JSON.parse(read('package.json')).scripts['image:check']).toBe('node scripts/image-check.mjs');
  });

  it("the entry point runs the app's API, worker, migrate command or CLI, and refuses anything else", async () => {
    const root = path.join(tmp, 'image');
    for (const [file, says] of [
      ['apps/mail-api/dist/main.js', 'api'],
      ['apps/mail-api/dist/worker.js', 'worker'],
      ['apps/mail-api/dist/cli/migrate.js', 'migrate'],
      ['apps/mail-api/dist/cli/mail-cli.js', 'cli'],
    ]) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      // The entry module sees itself as argv[1] (as if node had been started on it) and its arguments.
      const line = `console.log(${JSON.stringify(says)}, process.argv[1] === ${JSON.stringify(path.join(root, file))}, process.argv.slice(2).join(' '));`;
      writeFileSync(path.join(root, file), `${line}\n`);
    }
    const entry = path.join(REPO, 'docker/entrypoint.mjs');
    const env = { PATH: process.env.PATH, APP: 'mail-api' };
    const start = (args: string[], extra: Record<string, string> = {}) =>
      run(process.execPath, [entry, ...args], { cwd: root, env: { ...env, ...extra } });
    const say = async (...args: string[]) => (await start(args)).stdout.trim();
    expect(await say()).toBe('api true');
    expect(await say('worker')).toBe('worker true');
    expect(await say('migrate')).toBe('migrate true');
    expect(await say('cli', 'project:create', 'Acme')).toBe('cli true project:create Acme');
    await expect(start(['shell'])).rejects.toMatchObject({ code: 64, stderr: expect.stringContaining("unknown command 'shell'") });
    await expect(start(['toString'])).rejects.toMatchObject({ code: 64 });
    await expect(start(['cli'], { APP: 'platform-api' })).rejects.toMatchObject({ code: 64 });
  });

  describe('the HEALTHCHECK script', () => {
    let server: Server;
    let status = 200;
    beforeAll(async () => {
      server = createServer((req, res) => {
        res.writeHead(req.url === '/healthz' ? status : 404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('passes while /healthz answers 200 on the API port, fails otherwise', async () => {
      const port = String((server.address() as AddressInfo).port);
      const check = () => run(process.execPath, [path.join(REPO, 'docker/healthcheck.mjs')], { env: { APP: 'mail-api', MAIL_PORT: port } });
      await expect(check()).resolves.toBeDefined();
      status = 503;
      await expect(check()).rejects.toMatchObject({ code: 1 });
      await expect(run(process.execPath, [path.join(REPO, 'docker/healthcheck.mjs')], { env: { APP: 'nope' } })).rejects.toMatchObject({
        code: 1,
      });
    });
  });
});
