import type { NestExpressApplication } from '@nestjs/platform-express';
import { listen } from '@app/service-kit';
import { createPlatformHttpApp } from '../../src/http-setup.js';
import { Factories } from './factories.js';
import type { PlatformTestApp } from './platform-test-app.js';

type Auth = Record<string, string>;

/** A second API instance on A's database and Redis (a second replica behind a load balancer). */
export async function secondInstance(a: PlatformTestApp): Promise<{ b: NestExpressApplication; bUrl: string }> {
  const b = await createPlatformHttpApp(a.config);
  return { b, bUrl: await listen(b, 0, '127.0.0.1') };
}

/**
 * The people of the event-stream specs: in one fresh tenant a sender (may create notifications),
 * alice and bob (no features); an outsider of another tenant who may create notifications too.
 */
export async function streamAudience(a: PlatformTestApp) {
  const f = Factories.of(a);
  const tenant = await f.tenant();
  const sender = (await f.loggedInUser(a, { features: ['notifications.create'] }, tenant)).auth;
  const al = await f.loggedInUser(a, { features: [] }, tenant);
  const bo = await f.loggedInUser(a, { features: [] }, tenant);
  const ou = await f.loggedInUser(a, { features: ['notifications.create'] });
  return {
    f,
    tenant,
    sender,
    alice: { auth: al.auth, id: al.user.id },
    bob: { auth: bo.auth, id: bo.user.id },
    outsider: { auth: ou.auth as Auth, id: ou.user.id, sender: ou.auth as Auth },
  };
}
