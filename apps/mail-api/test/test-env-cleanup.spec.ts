import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { deleteQueueKeys, uniqueQueuePrefix } from '@app/service-kit/testing';
import { createMailTestEnv } from './support/mail-test-app.js';

/**
 * A test file's cleanup leaves nothing of it in the shared Redis: its queues and the keys the app
 * writes under its prefix (rate gates, leases) have no expiry, and a full test run left thousands.
 * Another file's keys are not touched.
 */
describe('test environment cleanup', () => {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  });

  afterAll(() => redis.quit());

  const keysUnder = async (prefix: string) => (await redis.keys(`${prefix}:*`)).length;

  it("deletes the file's queue and app keys, and no other file's", async () => {
    const env = await createMailTestEnv();
    const prefix = env.config.queuePrefix;
    const queue = new Queue('mail-email', { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix });
    await queue.add('email.deliver', { emailId: 'x' }, { priority: 10 });
    await queue.close();
    await redis.set(`${prefix}:mail:send-rate`, '14');
    const neighbour = uniqueQueuePrefix('mail');
    await redis.set(`${neighbour}:mail:send-rate`, '14');
    expect(await keysUnder(prefix)).toBeGreaterThan(3);

    await env.cleanup();

    expect(await keysUnder(prefix)).toBe(0);
    expect(await redis.get(`${neighbour}:mail:send-rate`)).toBe('14');
    await deleteQueueKeys(neighbour);
    expect(await keysUnder(neighbour)).toBe(0);
  });

  it('keeps the keys of a prefix the caller chose', async () => {
    const chosen = uniqueQueuePrefix('mail');
    const env = await createMailTestEnv({ QUEUE_PREFIX: chosen });
    await redis.set(`${chosen}:mail:send-rate`, '14');
    await env.cleanup();
    expect(await redis.get(`${chosen}:mail:send-rate`)).toBe('14');
    await deleteQueueKeys(chosen);
  });

  it('refuses a prefix outside the tests', async () => {
    await expect(deleteQueueKeys('mail')).rejects.toThrow('not a test queue prefix');
  });
});
