import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { NotificationsRepository } from '../src/modules/notifications/notifications.repository.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * The notifications table's one writer also deletes expired rows for the hourly housekeeping job:
 * only rows past `olderThan`, at most `limit` per call, oldest expiry first, of every tenant.
 */
describe('notifications: purge of long-expired rows (NotificationsRepository.purgeExpired)', () => {
  let t: PlatformTestApp;
  let ds: DataSource;
  let repo: NotificationsRepository;
  beforeAll(async () => {
    t = await startPlatformApp();
    ds = t.app.get(DataSource);
    repo = t.app.get(NotificationsRepository);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('deletes at most `limit` rows expired more than `olderThan` ago, in every tenant, and nothing else', async () => {
    const f = Factories.of(t);
    const tenantA = await f.tenant();
    const tenantB = await f.tenant();
    const a = { tenant: tenantA, user: await f.user(tenantA) };
    const b = { tenant: tenantB, user: await f.user(tenantB) };
    const insert = (owner: typeof a, title: string, expires: string | null) =>
      ds.query(
        `INSERT INTO notifications (tenant_id, recipient_user_id, batch_id, type, severity, title, expires_at)
         VALUES ($1, $2, gen_random_uuid(), 'test', 'info', $3, now() + $4::interval)`,
        [owner.tenant.id, owner.user.id, title, expires],
      );
    await insert(a, 'a-oldest', '-40 days');
    await insert(b, 'b-old', '-35 days');
    await insert(a, 'a-last-week', '-7 days');
    await insert(b, 'b-never', null);

    expect(await repo.purgeExpired(ds, { olderThan: '30 days', limit: 1 })).toBe(1);
    const titles = async () => {
      const rows = await ds.query<{ title: string }[]>('SELECT title FROM notifications WHERE recipient_user_id = ANY($1::uuid[])', [
        [a.user.id, b.user.id],
      ]);
      return rows.map((r) => r.title).sort();
    };
    expect(await titles()).toEqual(['a-last-week', 'b-never', 'b-old']);
    expect(await repo.purgeExpired(ds, { olderThan: '30 days', limit: 1000 })).toBe(1);
    expect(await titles()).toEqual(['a-last-week', 'b-never']);
    expect(await repo.purgeExpired(ds, { olderThan: '30 days', limit: 1000 })).toBe(0);
  });
});
