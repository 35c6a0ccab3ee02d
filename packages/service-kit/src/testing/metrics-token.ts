import { parsePrometheusText } from './prometheus-text.js';

/**
 * What the ops-metrics-token specs of both apps share: the Authorization values that must not open
 * `/metrics`, the worker's metrics address from its log, the worker port's refusals, label leaks.
 */

/** Authorization headers `/metrics` must refuse when `METRICS_TOKEN` is `token` (undefined: none). */
export function wrongMetricsAuthorizations(token: string): (string | undefined)[] {
  return [
    undefined,
    `Bearer ${token}x`,
    `Bearer ${token.slice(0, -1)}`,
    `bearer`,
    `Basic ${Buffer.from(`prometheus:${token}`).toString('base64')}`,
    token,
  ];
}

/** The worker's metrics base URL from the line it logs at start (`worker metrics on http://…/metrics`). */
export function workerMetricsUrl(output: string): string {
  const match = /worker metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(output);
  if (!match) throw new Error(`no metrics line in:\n${output}`);
  return match[1] ?? '';
}

/**
 * Asks the worker's `/metrics` with every wrong Authorization and answers each answer that is not a
 * 401 with the Bearer challenge and an `{error}` naming METRICS_TOKEN, and a `/healthz` that is not
 * open (200). Empty: the worker port is closed to all but the token and its probes stay open.
 */
export async function workerMetricsRefusalProblems(baseUrl: string, token: string): Promise<string[]> {
  const problems: string[] = [];
  for (const authorization of wrongMetricsAuthorizations(token)) {
    const res = await fetch(`${baseUrl}/metrics`, { headers: authorization === undefined ? {} : { Authorization: authorization } });
    const challenge = res.headers.get('www-authenticate');
    const text = await res.text();
    let error: unknown;
    try {
      error = (JSON.parse(text) as { error?: unknown }).error;
    } catch {
      error = undefined;
    }
    const refused =
      res.status === 401 && challenge === 'Bearer realm="metrics"' && typeof error === 'string' && /METRICS_TOKEN/.test(error);
    if (!refused) problems.push(`${JSON.stringify(authorization ?? null)}: ${res.status} ${challenge ?? ''} ${text.slice(0, 200)}`);
  }
  const health = await fetch(`${baseUrl}/healthz`);
  if (health.status !== 200) problems.push(`/healthz answered ${health.status}`);
  return problems;
}

/**
 * Ids (`ids`) that appear in the scraped texts and label names matching `forbiddenLabels`: a metric
 * labelled per tenant, project or user would grow without bound and leak who uses the service.
 */
export function metricsLabelLeaks(texts: string[], ids: string[], forbiddenLabels: RegExp): string[] {
  const leaks: string[] = [];
  for (const text of texts) {
    leaks.push(...ids.filter((id) => text.includes(id)).map((id) => `id ${id} in the metrics text`));
    const labelNames = new Set(parsePrometheusText(text).flatMap((s) => Object.keys(s.labels)));
    leaks.push(...[...labelNames].filter((name) => forbiddenLabels.test(name)).map((name) => `label ${name}`));
  }
  return leaks;
}
