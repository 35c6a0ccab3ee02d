import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { connectionRefused, waitFor, waitForLockWaiter } from '@app/service-kit/testing';
import { processEnv, startApiProcess, type ApiProcess } from './support/app-process.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { connectSse } from './support/sse-client.js';

/** The API's grace period after SIGTERM (a pod's terminationGracePeriodSeconds is 30 s). */
const GRACE_MS = 20_000;

/**
 * Issue #29, 4: SIGTERM to the real platform entry (`dist/main.js`) while a request is held inside its
 * handler (the test locks the notifications table, so the INSERT of a POST /notifications waits on
 * Postgres) and an SSE stream is open. The held request is answered 200 and stored, the stream ends
 * cleanly (the end of the response, not a reset), the process exits on the signal within the grace
 * period, and the request ids the server logged are exactly the ones answered.
 */
describe('platform-api graceful shutdown with a request held and an SSE stream open', () => {
  let a: PlatformTestApp;
  let b: ApiProcess | undefined;
  beforeAll(async () => {
    a = await startPlatformApp();
  });
  afterAll(async () => {
    await b?.kill('SIGKILL');
    await a?.close();
  });

  it('answers the held request, ends the stream cleanly, exits on SIGTERM; logged request ids = answered ones', async () => {
    b = await startApiProcess('B', processEnv(a.config));
    await b.ready;
    const f = Factories.of(a);
    const sender = await f.loggedInUser(a, { features: ['notifications.create'] });
    const notify = async (title: string, requestId: string) => {
      const res = await fetch(`${b!.url}/notifications`, {
        method: 'POST',
        headers: { ...sender.auth, 'Content-Type': 'application/json', 'X-Request-Id': requestId },
        body: JSON.stringify({ type: 'shutdown.test', severity: 'info', title, recipientUserId: sender.user.id }),
      });
      return { status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as { id?: string } };
    };
    const answers = [await notify('before', randomUUID())];
    expect(answers[0].status).toBe(201);

    const stream = await connectSse(b.url, '/events/stream', sender.auth);
    await stream.next((fr) => fr.kind === 'comment' && fr.text === 'connected');
    let streamCut = false;
    const streamEnd = stream.ended.then(() => 'ended' as const);

    const db = new DataSource({ type: 'postgres', url: a.config.databaseUrl });
    await db.initialize();
    const lock = db.createQueryRunner();
    try {
      await lock.connect();
      await lock.startTransaction();
      // SHARE mode conflicts with the INSERT's ROW EXCLUSIVE: the next notification waits inside its handler.
      await lock.query(`LOCK TABLE notifications IN SHARE MODE`);
      const heldId = randomUUID();
      const held = notify('held', heldId);
      await waitForLockWaiter(db, 'the held request waiting on the table lock');
      b.child.kill('SIGTERM');
      await waitFor(async () => ((await connectionRefused(b!.url)) ? true : null), 20_000, 'the listener to close after SIGTERM');
      await lock.commitTransaction();
      const heldAnswer = await held;
      expect(heldAnswer).toMatchObject({ status: 201, requestId: heldId, body: { id: expect.any(String) } });
      answers.push(heldAnswer);

      // The stream ends as a response ends (the client reconnects elsewhere), not cut by a reset.
      const streamOutcome = await Promise.race([streamEnd, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), GRACE_MS))]);
      streamCut = streamOutcome !== 'ended';
      expect(streamOutcome).toBe('ended');
      const exit = await Promise.race([b.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), GRACE_MS))]);
      expect(exit).toEqual({ code: null, signal: 'SIGTERM' });

      const stored = await db.query<{ id: string }[]>(`SELECT id FROM notifications WHERE id = $1`, [heldAnswer.body.id]);
      expect(stored).toHaveLength(1);
    } finally {
      if (streamCut) stream.close();
      if (lock.isTransactionActive) await lock.rollbackTransaction();
      await lock.release();
      await db.destroy();
    }
    const logged = b
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { reqId?: string; req?: { url?: string; method?: string } })
      .filter((line) => line.reqId && line.req?.url === '/notifications' && line.req.method === 'POST')
      .map((line) => line.reqId);
    expect(logged.sort()).toEqual(answers.map((x) => x.requestId).sort());
  }, 120_000);
});
