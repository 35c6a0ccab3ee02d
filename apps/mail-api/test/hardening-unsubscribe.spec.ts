import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { MailProjectCredentials } from '@app/contracts';
import { UnsubscribeLinks } from '../src/modules/unsubscribe/unsubscribe-links.js';
import { confirmationPage } from '../src/modules/unsubscribe/unsubscribe-pages.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

/** What a browser sends when it navigates or submits a form. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('unsubscribe links: GET asks, only POST unsubscribes (issue #11, 16)', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let links: UnsubscribeLinks;

  beforeAll(async () => {
    t = await startMailApp();
    p = await createProject(t, 'Link scanners');
    links = t.app.get(UnsubscribeLinks);
  });
  afterAll(async () => {
    await t.close();
  });

  async function newContact(email: string): Promise<{ id: string; link: string; token: string }> {
    const res = await request(t.url).post('/contacts').set(bearer(p.secretKey)).send({ email, subscribed: true }).expect(201);
    const link = new URL(links.urlFor(p.id, res.body.id)).pathname;
    return { id: res.body.id, link, token: link.split('/').pop()! };
  }

  async function subscribed(id: string): Promise<boolean> {
    return (await request(t.url).get(`/contacts/${id}`).set(bearer(p.secretKey)).expect(200)).body.subscribed;
  }

  it('GET and HEAD (what scanners and previews fetch) answer a page whose form POSTs to the link, and change nothing', async () => {
    const { id, link, token } = await newContact('scanned@example.net');
    for (let i = 0; i < 3; i += 1) {
      const res = await request(t.url).get(link).set('Accept', BROWSER_ACCEPT).expect(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('Unsubscribe from these emails?');
      expect(res.text).toContain(`<form method="post" action="${token}">`);
      expect(res.text).toContain('<button type="submit"');
      expect(res.text).not.toContain('You have been unsubscribed');
    }
    await request(t.url).head(link).expect(200);
    expect(await subscribed(id)).toBe(true);
  });

  it('the page is not cached, framed or leaking its URL, and may post only to this service', async () => {
    const { link } = await newContact('headers@example.net');
    const res = await request(t.url).get(link).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("form-action 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it("the form's POST (urlencoded, from a browser) unsubscribes and answers a confirmation page", async () => {
    const { id, link } = await newContact('clicked@example.net');
    const page = await request(t.url).get(link).expect(200);
    // Submit the form as a browser would: its action, resolved against the page's URL.
    const action = new URL(/<form method="post" action="([^"]+)">/.exec(page.text)![1], `${t.url}${link}`);
    expect(action.pathname).toBe(link);
    const res = await request(t.url).post(action.pathname).set('Accept', BROWSER_ACCEPT).type('form').send('').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('You have been unsubscribed');
    expect(await subscribed(id)).toBe(false);
  });

  it('the RFC 8058 one-click POST unsubscribes and answers 200', async () => {
    const { id, link } = await newContact('one-click@example.net');
    const res = await request(t.url).post(link).type('form').send('List-Unsubscribe=One-Click').expect(200);
    expect(res.body).toEqual({ success: true, unsubscribed: true });
    expect(await subscribed(id)).toBe(false);
  });

  it('reflects nothing unescaped: a hostile token is refused before any page, and the page escapes what it shows', async () => {
    for (const bad of ['%3Cscript%3Ealert(1)%3C%2Fscript%3E', '%22%3E%3Cimg%20src%3Dx%3E']) {
      const res = await request(t.url).get(`/unsubscribe/${bad}`);
      expectMailError(res, 400, 'INVALID_UNSUBSCRIBE_LINK', 'invalid unsubscribe link', {
        suggestion: 'use the complete link from the email',
      });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.text).not.toMatch(/<script|<img/);
    }
    const page = confirmationPage('"><script>alert(1)</script>');
    expect(page).not.toContain('<script>');
    expect(page).toContain('action="%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E"');
  });
});
