import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { MailProjectCredentials } from '@app/contracts';
import { UnsubscribeLinks } from '../src/modules/unsubscribe/unsubscribe-links.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

describe('unsubscribe links', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let links: UnsubscribeLinks;

  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_PUBLIC_URL: 'https://mail.example.test/' } });
    p = await createProject(t, 'Unsubscribe');
    links = t.app.get(UnsubscribeLinks);
  });
  afterAll(async () => {
    await t.close();
  });

  async function newContact(project: MailProjectCredentials, email: string): Promise<string> {
    const res = await request(t.url).post('/contacts').set(bearer(project.secretKey)).send({ email, subscribed: true }).expect(201);
    return res.body.id;
  }

  async function subscribed(project: MailProjectCredentials, id: string): Promise<boolean> {
    const res = await request(t.url).get(`/contacts/${id}`).set(bearer(project.secretKey)).expect(200);
    return res.body.subscribed;
  }

  /** The path of a link as the email carries it (the public URL is this deployment's MAIL_PUBLIC_URL). */
  function pathOf(url: string): string {
    expect(url.startsWith('https://mail.example.test/unsubscribe/')).toBe(true);
    return new URL(url).pathname;
  }

  it('GET on the link (no API key) answers an HTML page asking to confirm, and changes nothing; again: same answer', async () => {
    const id = await newContact(p, 'get@example.net');
    const link = pathOf(links.urlFor(p.id, id));
    const res = await request(t.url).get(link).expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('Unsubscribe from these emails?');
    expect(await subscribed(p, id)).toBe(true);
    const again = await request(t.url).get(link).expect(200);
    expect(again.text).toBe(res.text);
    expect(await subscribed(p, id)).toBe(true);
  });

  it('POST on the link (RFC 8058 one-click, form body) unsubscribes; repeated: 200 again', async () => {
    const id = await newContact(p, 'post@example.net');
    const link = pathOf(links.urlFor(p.id, id));
    for (let i = 0; i < 2; i++) {
      const res = await request(t.url).post(link).type('form').send('List-Unsubscribe=One-Click').expect(200);
      expect(res.body).toEqual({ success: true, unsubscribed: true });
      expect(await subscribed(p, id)).toBe(false);
    }
  });

  it('POST accepts any body, or none', async () => {
    const id = await newContact(p, 'nobody@example.net');
    await request(t.url)
      .post(pathOf(links.urlFor(p.id, id)))
      .expect(200);
    expect(await subscribed(p, id)).toBe(false);
  });

  it('a tampered or truncated token is 400 INVALID_UNSUBSCRIBE_LINK and changes nothing', async () => {
    const id = await newContact(p, 'tamper@example.net');
    const token = pathOf(links.urlFor(p.id, id)).split('/').pop()!;
    const flipped = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    // Another contact's id with this token's signature: the ids are covered by the MAC.
    const forged = links.tokenFor(p.id, randomUUID()).slice(0, 43) + token.slice(43);
    for (const bad of [flipped, token.slice(0, -2), forged, 'not-a-token', `${token}x`]) {
      for (const method of ['get', 'post'] as const) {
        const res = await request(t.url)[method](`/unsubscribe/${bad}`);
        expectMailError(res, 400, 'INVALID_UNSUBSCRIBE_LINK', 'invalid unsubscribe link', {
          suggestion: 'use the complete link from the email',
        });
      }
    }
    expect(await subscribed(p, id)).toBe(true);
  });

  it('a valid link of a deleted or unknown contact answers 200 (nothing to unsubscribe, nothing leaked)', async () => {
    const id = await newContact(p, 'deleted@example.net');
    await request(t.url).delete(`/contacts/${id}`).set(bearer(p.secretKey)).expect(204);
    await request(t.url)
      .get(pathOf(links.urlFor(p.id, id)))
      .expect(200);
    await request(t.url)
      .post(pathOf(links.urlFor(p.id, randomUUID())))
      .expect(200);
  });

  it('is scoped to the project the link was made for', async () => {
    const other = await createProject(t, 'Other');
    const id = await newContact(other, 'scoped@example.net');
    // A link signed for project p naming other's contact: valid signature, but no such contact in p.
    await request(t.url)
      .post(pathOf(links.urlFor(p.id, id)))
      .expect(200);
    expect(await subscribed(other, id)).toBe(true);
    await request(t.url)
      .post(pathOf(links.urlFor(other.id, id)))
      .expect(200);
    expect(await subscribed(other, id)).toBe(false);
  });

  it('does not count against the per-project API rate limit (no RateLimit headers)', async () => {
    const id = await newContact(p, 'ratelimit@example.net');
    const res = await request(t.url)
      .get(pathOf(links.urlFor(p.id, id)))
      .expect(200);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });
});
