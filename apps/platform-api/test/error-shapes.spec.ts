import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Body, Controller, Get, Module, Post, Query, UseFilters } from '@nestjs/common';
import { IsEmail, IsInt, IsString, Max, Min } from 'class-validator';
import { Type } from 'class-transformer';
import request from 'supertest';
import { DomainError, Public } from '@app/service-kit';
import { OkFalseExceptionFilter } from '../src/core/errors/platform-exception.filter.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

class ProbeBody {
  @IsEmail() email: string;
  @IsString() name: string;
}
class ProbeQuery {
  @Type(() => Number) @IsInt() @Min(1) @Max(100) pageSize: number;
}

/** Test-only routes that exercise the app's global pipe and filters. */
@Public()
@Controller('__probe')
class ProbeController {
  @Post('body') body(@Body() body: ProbeBody) {
    return { ok: true, email: body.email };
  }
  @Get('query') query(@Query() query: ProbeQuery) {
    return { pageSize: query.pageSize };
  }
  @Get('boom') boom(): never {
    throw new Error('secret connection string postgres://user:pw@db');
  }
  @Get('typed') typed(): never {
    throw new DomainError('reserved_key', 'section uses a reserved key', { status: 400 });
  }
  @Post('ok-false') @UseFilters(OkFalseExceptionFilter) okFalse(@Body() body: ProbeBody) {
    return { ok: true, email: body.email };
  }
  @Get('limited') @UseFilters(OkFalseExceptionFilter) limited(): never {
    throw new DomainError('RATE_LIMIT_EXCEEDED', 'too many attempts', { headers: { 'Retry-After': '42' } });
  }
}
@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('platform error shapes', () => {
  let t: PlatformTestApp;
  beforeAll(async () => {
    t = await startPlatformApp({ extraModules: [ProbeModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('an unknown route is 404 {error}', async () => {
    const res = await request(t.url).get('/no/such/route').expect(404);
    expect(res.body).toEqual({ error: 'Cannot GET /no/such/route' });
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('malformed JSON is 400 {error}', async () => {
    const res = await request(t.url).post('/__probe/body').set('Content-Type', 'application/json').send('{"email": ').expect(400);
    expect(res.body).toEqual({ error: 'malformed JSON body' });
  });

  it('an invalid body is 400 with field details', async () => {
    const res = await request(t.url).post('/__probe/body').send({ email: 'nope', name: 5 }).expect(400);
    expect(res.body.error).toMatch(/^validation failed/);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { field: 'email', code: 'isEmail', message: 'email must be an email' },
        { field: 'name', code: 'isString', message: 'name must be a string' },
      ]),
    );
  });

  it('an invalid query is 400 with field details; a valid one is converted', async () => {
    const bad = await request(t.url).get('/__probe/query?pageSize=500').expect(400);
    expect(bad.body.details).toEqual([{ field: 'pageSize', code: 'max', message: 'pageSize must not be greater than 100' }]);
    const good = await request(t.url).get('/__probe/query?pageSize=20').expect(200);
    expect(good.body).toEqual({ pageSize: 20 });
  });

  it('an unexpected failure is 500 without internals', async () => {
    const res = await request(t.url).get('/__probe/boom').expect(500);
    expect(res.body).toEqual({ error: 'internal server error' });
    expect(JSON.stringify(res.body)).not.toContain('postgres://');
  });

  it('a typed domain error carries its code', async () => {
    const res = await request(t.url).get('/__probe/typed').expect(400);
    expect(res.body).toEqual({ error: 'section uses a reserved key', code: 'reserved_key' });
  });

  it('{ok: false, error} routes wrap validation failures, but rate limits stay {error} with Retry-After', async () => {
    const res = await request(t.url).post('/__probe/ok-false').type('form').send('email=x').expect(400);
    expect(res.body.ok).toBe(false);
    expect(res.body.error).toMatch(/^validation failed/);
    const limited = await request(t.url).get('/__probe/limited').expect(429);
    expect(limited.body).toEqual({ error: 'too many attempts' });
    expect(limited.headers['retry-after']).toBe('42');
  });
});
