import { afterAll, beforeAll, describe, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { generateKeyPair, storedKeyPair, type ProjectKeyPair } from '../src/core/auth/project-keys.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const INVALID = ['invalid API key', { suggestion: "send `Authorization: Bearer <key>` with your project's secret key (sk_...)" }] as const;

/**
 * A project written straight to the database, as another instance or the CLI would: this instance's
 * caches hear nothing of it, so whether a request finds it shows whether that request asked Postgres.
 */
async function insertProjectBehindTheCache(t: MailTestApp, keys: ProjectKeyPair): Promise<void> {
  const stored = storedKeyPair(keys);
  await t.app
    .get(DataSource)
    .query(`INSERT INTO projects (name, secret_key_hash, public_key_hash, secret_key_prefix) VALUES ('Behind the cache', $1, $2, $3)`, [
      stored.secretKeyHash,
      stored.publicKeyHash,
      stored.secretKeyPrefix,
    ]);
}

describe('unknown API keys are remembered for MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS (issue #11, 15)', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    // A TTL far longer than the test: within it, an unknown key must never reach Postgres again.
    t = await startMailApp({ env: { MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS: '300' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a flood of an unknown well-formed key is answered from memory, not by a query per request', async () => {
    const keys = generateKeyPair();
    const flood = await Promise.all(Array.from({ length: 20 }, () => request(t.url).get('/contacts').set(bearer(keys.secretKey))));
    for (const res of flood) expectMailError(res, 401, 'INVALID_API_KEY', ...INVALID);
    await insertProjectBehindTheCache(t, keys);
    // Had this request queried Postgres, it would have found the project.
    expectMailError(await request(t.url).get('/contacts').set(bearer(keys.secretKey)), 401, 'INVALID_API_KEY', ...INVALID);
    expectMailError(
      await request(t.url).post('/v1/track').set(bearer(keys.secretKey)).send({ email: 'a@example.com', event: 'x' }),
      401,
      'INVALID_API_KEY',
      ...INVALID,
    );
    // The pair's other key was never seen, so it is looked up, and found.
    await request(t.url).post('/v1/track').set(bearer(keys.publicKey)).send({ email: 'a@example.com', event: 'x' }).expect(200);
  });

  it('never delays keys that were not refused before: a new project and rotated keys work at once', async () => {
    const p = await createProject(t, 'Fresh');
    await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    const keys = generateKeyPair();
    await insertProjectBehindTheCache(t, keys);
    await request(t.url).get('/contacts').set(bearer(keys.secretKey)).expect(200);
  });
});

describe('a remembered unknown key expires after the TTL', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS: '1' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a key refused before its project existed works once the TTL has passed', async () => {
    const keys = generateKeyPair();
    expectMailError(await request(t.url).get('/contacts').set(bearer(keys.secretKey)), 401, 'INVALID_API_KEY', ...INVALID);
    await insertProjectBehindTheCache(t, keys);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await request(t.url).get('/contacts').set(bearer(keys.secretKey)).expect(200);
  });
});
