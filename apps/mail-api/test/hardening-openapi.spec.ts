import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
}

describe('the OpenAPI document (issue #11, 17)', () => {
  let t: MailTestApp;
  let doc: { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };
  beforeAll(async () => {
    t = await startMailApp();
    doc = (await request(t.url).get('/openapi.json').expect(200)).body;
  });
  afterAll(async () => {
    await t.close();
  });

  const headers = (path: string, method: string) => (doc.paths[path]?.[method]?.parameters ?? []).filter((p) => p.in === 'header');

  it('declares one optional Idempotency-Key header on POST /v1/send', () => {
    const idempotency = headers('/v1/send', 'post').filter((p) => p.name.toLowerCase() === 'idempotency-key');
    expect(idempotency).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]);
  });

  it('the unsubscribe endpoints declare no header a client would have to send', () => {
    for (const method of ['get', 'post']) expect(headers('/unsubscribe/{token}', method)).toEqual([]);
  });
});
