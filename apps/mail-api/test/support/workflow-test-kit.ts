import { expect } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { waitFor } from '@app/service-kit/testing';
import type { MailWorkflowExecution } from '../../src/modules/workflows/workflow-executions.dto.js';
import type { MailWorkflowCreated } from '../../src/modules/workflows/workflows.dto.js';
import { insertVerifiedDomain } from './delivery-fixtures.js';
import { bearer, createProject } from './mail-api-helpers.js';
import type { MailTestApp } from './mail-test-app.js';
import { FAST_WORKFLOW_RECOVERY, WorkerFleet } from './worker-fleet.js';

/** What the workflow specs need of a running app: its URL (in process or not). */
export interface WorkflowApi {
  url: string;
}

/** A project sending from a verified domain, with one template its SEND_EMAIL steps use. */
export interface ProjectWithTemplate {
  project: MailProjectCredentials;
  key: string;
  templateId: string;
}

export async function createProjectWithTemplate(
  t: MailTestApp,
  domain: string,
  template: { name: string; subject: string; body: string; from: string },
): Promise<ProjectWithTemplate> {
  const project = await createProject(t);
  await insertVerifiedDomain(t.app.get(DataSource), project.id, domain);
  const res = await request(t.url).post('/templates').set(bearer(project.secretKey)).send(template).expect(201);
  return { project, key: project.secretKey, templateId: res.body.id as string };
}

export async function createWorkflow(t: WorkflowApi, key: string, body: Record<string, unknown>): Promise<MailWorkflowCreated> {
  const res = await request(t.url).post('/workflows').set(bearer(key)).send(body);
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: expect.objectContaining({ id: expect.any(String) }) });
  return res.body as MailWorkflowCreated;
}

/** POST /v1/track; answers the track result (contact and event ids). */
export async function track(
  t: WorkflowApi,
  key: string,
  email: string,
  event: string,
  data?: Record<string, unknown>,
): Promise<{ contact: string; event: string }> {
  const res = await request(t.url).post('/v1/track').set(bearer(key)).send({ email, event, data });
  expect(res.status).toBe(200);
  return res.body.data as { contact: string; event: string };
}

export async function listExecutions(t: WorkflowApi, key: string, workflowId: string, query = ''): Promise<MailWorkflowExecution[]> {
  const res = await request(t.url).get(`/workflows/${workflowId}/executions${query}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body.items as MailWorkflowExecution[];
}

/** Polls the executions list until `predicate` holds for it. */
export function waitForExecutions(
  t: WorkflowApi,
  key: string,
  workflowId: string,
  predicate: (items: MailWorkflowExecution[]) => boolean,
  timeoutMs = 15_000,
  what = 'executions',
): Promise<MailWorkflowExecution[]> {
  return waitFor(
    async () => {
      const items = await listExecutions(t, key, workflowId);
      return predicate(items) ? items : null;
    },
    timeoutMs,
    what,
  );
}

/** The one execution of a workflow, once it reached one of `statuses`. */
export async function waitForExecution(
  t: WorkflowApi,
  key: string,
  workflowId: string,
  statuses: string[],
  timeoutMs = 15_000,
): Promise<MailWorkflowExecution> {
  const [execution] = await waitForExecutions(
    t,
    key,
    workflowId,
    (items) => items.length > 0 && statuses.includes(items[0].status),
    timeoutMs,
    `an execution ${statuses.join('/')}`,
  );
  return execution;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** The client's port: which process sent it (`workerOwningConnection`). */
  remotePort: number | undefined;
  /** What `tagArrivals` said of the client port when the request began (the client may time out soon after). */
  tag?: unknown;
}

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Answers the next requests with these statuses (then 200); a `Location` goes with 3xx. */
  respondWith(...statuses: number[]): void;
  /** Holds the next `count` answers for `ms` (of requests to `path` only, when given). */
  holdNext(ms: number, count?: number, path?: string): void;
  /** Answers every held request now (a test that holds a reply until it has seen what it waits for). */
  releaseHeld(): void;
  /**
   * Tags each later request with `tag(clientPort)`, computed as the request begins: while the client's
   * connection is surely open (e.g. which worker process owns it), not once a short client timeout closed it.
   */
  tagArrivals(tag: (clientPort: number) => unknown): void;
  close(): Promise<void>;
}

/** A real HTTP server (node:http) on 127.0.0.1 that records every request, raw body included. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const planned: number[] = [];
  const hold: { ms: number; left: number; path?: string } = { ms: 0, left: 0 };
  const held = new Map<NodeJS.Timeout, () => void>();
  let tagArrival: ((clientPort: number) => unknown) | null = null;
  const server = http.createServer((req, res) => {
    const remotePort = req.socket.remotePort;
    const tag = tagArrival && remotePort !== undefined ? { tag: tagArrival(remotePort) } : {};
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        remotePort,
        ...tag,
      });
      const status = planned.shift() ?? 200;
      const answer = () => {
        if (status >= 300 && status < 400) res.setHeader('Location', 'http://127.0.0.1:1/elsewhere');
        res.writeHead(status, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      };
      if (hold.left > 0 && (hold.path === undefined || hold.path === req.url)) {
        hold.left -= 1;
        const timer = setTimeout(() => {
          held.delete(timer);
          answer();
        }, hold.ms);
        held.set(timer, answer);
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith: (...statuses) => void planned.push(...statuses),
    holdNext: (ms, count = 1, path) => Object.assign(hold, { ms, left: count, path }),
    tagArrivals: (tag) => {
      tagArrival = tag;
    },
    releaseHeld: () => {
      for (const [timer, answer] of held) {
        clearTimeout(timer);
        held.delete(timer);
        answer();
      }
    },
    close: async () => {
      for (const timer of held.keys()) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The setup of the specs that kill worker processes mid-workflow: the webhook receiver, a fleet on a
 * private Redis with both sweeps every second and webhook retries after 50 ms (plus `workerEnv`), and a
 * project sending from `domain` with `template`. No worker is started yet.
 */
export async function startWorkflowFleet(
  domain: string,
  template: { name: string; subject: string; body: string; from: string },
  workerEnv: Record<string, string>,
): Promise<{ fleet: WorkerFleet; receiver: WebhookReceiver; setup: ProjectWithTemplate }> {
  const receiver = await startWebhookReceiver();
  try {
    const fleet = await WorkerFleet.start({ privateRedis: true, workerEnv: { ...FAST_WORKFLOW_RECOVERY, ...workerEnv } });
    return { fleet, receiver, setup: await createProjectWithTemplate(fleet.t, domain, template) };
  } catch (err) {
    await receiver.close();
    throw err;
  }
}
