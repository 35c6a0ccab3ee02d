import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { IsEmail, IsInt, IsString, Max, Min } from 'class-validator';
import request, { type Response } from 'supertest';
import { DomainError, Public } from '@app/service-kit';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

class ProbeBody {
  @IsEmail() email: string;
  @IsString() name: string;
  @IsInt() @Min(1) @Max(100) limit: number;
}

/** Test-only routes that exercise the app's global pipe and filter (no API key: the guard is not under test here). */
@Public()
@Controller('__probe')
class ProbeController {
  @Post('body') body(@Body() body: ProbeBody) {
    return { ok: true, email: body.email };
  }
  @Get('boom') boom(): never {
    throw new Error('secret connection string postgres://user:pw@db');
  }
  @Get('typo') typo(): never {
    throw new DomainError('INVALID_DOMAIN', 'sender domain is not verified', {
      status: 403,
      suggestion: 'verify the domain with POST /domains/{id}/verify first',
    });
  }
  @Get('limited') limited(): never {
    throw new DomainError('RATE_LIMIT_EXCEEDED', 'rate limit exceeded', { headers: { 'Retry-After': '42' } });
  }
}
@Module({ controllers: [ProbeController] })
class ProbeModule {}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The invariants every mail error body has, whatever the error. */
function expectEnvelope(res: Response, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.statusCode).toBe(status);
  expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
  expect(res.body.error.requestId).toEqual(expect.any(String));
  expect(res.body.message).toBe(res.body.error.message);
  expect(res.body.timestamp).toMatch(ISO_TIMESTAMP);
  expect(Math.abs(Date.parse(res.body.timestamp) - Date.now())).toBeLessThan(60_000);
}

describe('mail error envelope', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp({ extraModules: [ProbeModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('an unknown route is 404 NOT_FOUND, its requestId the X-Request-Id header', async () => {
    const res = await request(t.url).get('/no/such/route');
    expectEnvelope(res, 404, 'NOT_FOUND');
    expect(res.body).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: 'Cannot GET /no/such/route', statusCode: 404, requestId: res.headers['x-request-id'] },
      timestamp: res.body.timestamp,
      message: 'Cannot GET /no/such/route',
    });
  });

  it('carries an incoming X-Request-Id into the body', async () => {
    const res = await request(t.url).get('/no/such/route').set('X-Request-Id', 'support-ticket-77');
    expectEnvelope(res, 404, 'NOT_FOUND');
    expect(res.body.error.requestId).toBe('support-ticket-77');
  });

  it('malformed JSON is 400 INVALID_JSON', async () => {
    const res = await request(t.url).post('/__probe/body').set('Content-Type', 'application/json').send('{"email": ');
    expectEnvelope(res, 400, 'INVALID_JSON');
    expect(res.body.error.message).toBe('malformed JSON body');
    expect(res.body.error).not.toHaveProperty('errors');
  });

  it('a DTO failure is 422 VALIDATION_ERROR with errors [{field, message, code}]', async () => {
    const res = await request(t.url).post('/__probe/body').send({ email: 'nope', name: 5, limit: 500 });
    expectEnvelope(res, 422, 'VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/^validation failed/);
    expect(res.body.error.errors).toHaveLength(3);
    expect(res.body.error.errors).toEqual(
      expect.arrayContaining([
        { field: 'email', code: 'isEmail', message: 'email must be an email' },
        { field: 'name', code: 'isString', message: 'name must be a string' },
        { field: 'limit', code: 'max', message: 'limit must not be greater than 100' },
      ]),
    );
    expect(res.body.error).not.toHaveProperty('suggestion');
  });

  it('a valid body passes the pipe', async () => {
    const res = await request(t.url).post('/__probe/body').send({ email: 'a@example.com', name: 'A', limit: 5 }).expect(201);
    expect(res.body).toEqual({ ok: true, email: 'a@example.com' });
  });

  it('an unexpected failure is 500 INTERNAL_ERROR without internals', async () => {
    const res = await request(t.url).get('/__probe/boom');
    expectEnvelope(res, 500, 'INTERNAL_ERROR');
    expect(res.body.error.message).toBe('internal server error');
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message', 'requestId', 'statusCode']);
    expect(JSON.stringify(res.body)).not.toMatch(/postgres:|secret connection|at .*\.ts/);
  });

  it('a domain error keeps its code, status and suggestion', async () => {
    const res = await request(t.url).get('/__probe/typo');
    expectEnvelope(res, 403, 'INVALID_DOMAIN');
    expect(res.body.error).toEqual({
      code: 'INVALID_DOMAIN',
      message: 'sender domain is not verified',
      statusCode: 403,
      requestId: res.headers['x-request-id'],
      suggestion: 'verify the domain with POST /domains/{id}/verify first',
    });
  });

  it('headers a domain error carries (Retry-After) are sent', async () => {
    const res = await request(t.url).get('/__probe/limited');
    expectEnvelope(res, 429, 'RATE_LIMIT_EXCEEDED');
    expect(res.headers['retry-after']).toBe('42');
  });
});
