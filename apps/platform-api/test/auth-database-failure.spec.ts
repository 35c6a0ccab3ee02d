import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { databaseNameOf } from '@app/service-kit';
import { AccessCacheService } from '../src/core/auth/access-cache.service.js';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;

const UNAVAILABLE = { error: 'service temporarily unavailable, try again shortly' };
const FEATURES = ['attachments.view', 'attachments.manage', 'ai_assistant.view', 'auth.roles.list'];

/**
 * A database that fails while a request is being authenticated (issue #27 item 10): the answer is 503
 * in the route's error shape with Retry-After, never 401 (which sends a client to its login page),
 * never 500, never a stack. Two real failures of this file's own database (never another one of the
 * shared server): an outage (every connection terminated and new ones refused), and a lookup whose
 * table is locked away (a migration holding it) while the rest of the database answers.
 */
describe('authentication when the database fails', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let admin: pg.Client;
  let database: string;
  let user: { email: string; password: string; id: string };
  /** A second user of the tenant: ACLs are cached per user, so one can be cached while the other is not. */
  let other: { email: string; password: string; id: string };
  let attachmentId: string;
  let sessionToken: string;
  /** A transaction of this spec holding table locks (the partial failure), released after each test. */
  let locker: pg.Client | null = null;

  const quoted = () => `"${database.replace(/"/g, '""')}"`;
  const terminateConnections = () =>
    admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);

  /** Every connection of the app ended and new ones refused, until `databaseUp`. */
  const databaseDown = async () => {
    await admin.query(`ALTER DATABASE ${quoted()} WITH ALLOW_CONNECTIONS false`);
    await terminateConnections();
  };
  const databaseUp = () => admin.query(`ALTER DATABASE ${quoted()} WITH ALLOW_CONNECTIONS true`);

  /**
   * The tables locked (ACCESS EXCLUSIVE) by a transaction of this spec; the app's connections are
   * renewed with a lock_timeout, so its statements on them fail (55P03) instead of waiting.
   */
  const lockTables = async (...tables: string[]) => {
    await admin.query(`ALTER DATABASE ${quoted()} SET lock_timeout = '200ms'`);
    await terminateConnections();
    locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    await locker.query('BEGIN');
    for (const table of tables) await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  };

  /** A session this instance has not cached yet: its first request loads it from the database. */
  const freshSession = async (who = user): Promise<{ token: string; auth: Auth }> => {
    const token = await login(t, who.email, who.password);
    return { token, auth: { Authorization: `Bearer ${token}` } };
  };

  const expectUnavailable = (res: request.Response) => {
    expect({ status: res.status, body: res.body as unknown, retryAfter: res.headers['retry-after'] }).toEqual({
      status: 503,
      body: UNAVAILABLE,
      retryAfter: '5',
    });
  };

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    database = databaseNameOf(t.db.url);
    const maintenance = new URL(t.db.url);
    maintenance.pathname = '/postgres';
    admin = new pg.Client({ connectionString: maintenance.toString() });
    await admin.connect();
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: FEATURES });
    user = await f.user(tenant, { roleIds: [role.id] });
    other = await f.user(tenant, { roleIds: [role.id] });
    const { auth } = await freshSession();
    const uploaded = await request(t.url)
      .post('/attachments')
      .set(auth)
      .field('entityId', 'crm:person')
      .field('recordId', 'r1')
      .attach('file', Buffer.from('private bytes'), 'note.txt')
      .expect(200);
    attachmentId = uploaded.body.item.id;
    sessionToken = (await request(t.url).post('/ai_assistant/session-key').set(auth).expect(200)).body.sessionToken;
  });
  afterEach(async () => {
    if (locker) {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
      locker = null;
    }
    await admin.query(`ALTER DATABASE ${quoted()} RESET lock_timeout`);
    await databaseUp();
  });
  afterAll(async () => {
    await admin?.end();
    await t?.close();
  });

  it('an outage: 503 {error} with Retry-After on bearer and cookie sessions, the ACL load, files and session keys; login 503 {ok: false}', async () => {
    const bearer = await freshSession();
    const cookie = await freshSession();
    const optional = await freshSession();
    // Session and ACL cached, then the ACLs dropped: the next request loads only the ACL.
    const aclOnly = await freshSession(other);
    await request(t.url).get('/auth/profile').set(aclOnly.auth).expect(200);
    await t.app.get(AccessCacheService).invalidateAcls();
    // Session and ACL cached (for `user` only): the session key is the first thing the tool call reads.
    const warm = await freshSession();
    await request(t.url).get('/auth/profile').set(warm.auth).expect(200);

    await databaseDown();
    expectUnavailable(await request(t.url).get('/auth/profile').set(bearer.auth));
    expectUnavailable(await request(t.url).get('/auth/profile').set('Cookie', `auth_token=${cookie.token}`));
    expectUnavailable(await request(t.url).get('/auth/profile').set(aclOnly.auth));
    expectUnavailable(await request(t.url).get(`/attachments/file/${attachmentId}`).set(optional.auth));
    expectUnavailable(
      await request(t.url)
        .post('/ai_assistant/tools/execute')
        .set(warm.auth)
        .send({ toolName: 'auth.list_roles', args: { _sessionToken: sessionToken } }),
    );
    const loginRes = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: user.password });
    expect({ status: loginRes.status, body: loginRes.body as unknown, retryAfter: loginRes.headers['retry-after'] }).toEqual({
      status: 503,
      body: { ok: false, ...UNAVAILABLE },
      retryAfter: '5',
    });

    // Back: the same sessions work again (none was ended by the outage).
    await databaseUp();
    await request(t.url).get('/auth/profile').set(bearer.auth).expect(200);
    await request(t.url).get('/auth/profile').set('Cookie', `auth_token=${cookie.token}`).expect(200);
    await request(t.url).get(`/attachments/file/${attachmentId}`).set(optional.auth).expect(200);
    await request(t.url)
      .post('/ai_assistant/tools/execute')
      .set(warm.auth)
      .send({ toolName: 'auth.list_roles', args: { _sessionToken: sessionToken } })
      .expect(201);
  });

  it('the session lookup failing while the rest of the database answers: 503, not 500, and not 401 on a file route', async () => {
    const bearer = await freshSession();
    const optional = await freshSession();
    await lockTables('sessions');
    expectUnavailable(await request(t.url).get('/auth/profile').set(bearer.auth));
    // The file route's optional authentication must not fall back to "anonymous" (401 for a private file).
    expectUnavailable(await request(t.url).get(`/attachments/file/${attachmentId}`).set(optional.auth));
    expectUnavailable(await request(t.url).get(`/attachments/image/${attachmentId}?width=10`).set(optional.auth));
  });

  it('the ACL lookup failing: 503', async () => {
    const session = await freshSession();
    await t.app.get(AccessCacheService).invalidateAcls();
    await lockTables('user_acls');
    expectUnavailable(await request(t.url).get('/auth/profile').set(session.auth));
  });

  it('the AI session key lookup failing: 503, not 500 (nor the 401 of an invalid key)', async () => {
    const session = await freshSession();
    await request(t.url).get('/auth/profile').set(session.auth).expect(200);
    await lockTables('ai_session_keys');
    expectUnavailable(
      await request(t.url)
        .post('/ai_assistant/tools/execute')
        .set(session.auth)
        .send({ toolName: 'auth.list_roles', args: { _sessionToken: sessionToken } }),
    );
  });
});
