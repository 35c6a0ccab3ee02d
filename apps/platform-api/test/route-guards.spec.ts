import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Body, Controller, Get, Module, Post, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { bindRouteGuards, listen, Public } from '@app/service-kit';

// createHttpApp binds each route's guards at startup (bindRouteGuards) instead of registering global
// ones: authentication on every route that is not @Public(), then the body guard on every route that
// reads the request, in that order, in each app built in the process with that app's own guards.
class RecordingGuard implements CanActivate {
  readonly seen: string[];
  constructor(
    private readonly name: string,
    seen: string[],
    private readonly allow = true,
  ) {
    this.seen = seen;
  }
  canActivate(context: ExecutionContext): boolean {
    this.seen.push(`${this.name} ${context.getArgByIndex<{ path: string }>(0).path}`);
    return this.allow;
  }
}

@Controller('probe')
@Public()
class ProbeController {
  @Get()
  probe(): { ok: true } {
    return { ok: true };
  }
}

@Controller('open')
class OpenController {
  @Public()
  @Post()
  open(@Body() body: unknown): unknown {
    return body;
  }

  @Get('private')
  private(): { ok: true } {
    return { ok: true };
  }
}

@Module({ controllers: [ProbeController, OpenController] })
class GuardedModule {}

async function start(seen: string[], allowAuth = true): Promise<{ app: NestExpressApplication; url: string }> {
  const app = await NestFactory.create<NestExpressApplication>(GuardedModule, { logger: false });
  bindRouteGuards(app, { authenticate: new RecordingGuard('auth', seen, allowAuth), parseBody: new RecordingGuard('body', seen) });
  return { app, url: await listen(app, 0, '127.0.0.1') };
}

describe('route guards bound at startup', () => {
  const seenByFirst: string[] = [];
  const seenBySecond: string[] = [];
  let first: { app: NestExpressApplication; url: string };
  let second: { app: NestExpressApplication; url: string };

  beforeAll(async () => {
    first = await start(seenByFirst);
    second = await start(seenBySecond, false);
  });
  afterAll(async () => {
    await first.app.close();
    await second.app.close();
  });

  it('runs no guard on a public route that reads nothing, the body guard alone on a public route with input, and authentication first elsewhere', async () => {
    seenByFirst.length = 0;
    expect((await fetch(`${first.url}/probe`)).status).toBe(200);
    expect(seenByFirst).toEqual([]);
    const posted = await fetch(`${first.url}/open`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(posted.status).toBe(201);
    expect(seenByFirst).toEqual(['body /open']);
    seenByFirst.length = 0;
    expect((await fetch(`${first.url}/open/private`)).status).toBe(200);
    expect(seenByFirst).toEqual(['auth /open/private']);
  });

  it('hands each request to the guards of the app that serves it (two apps share the controller classes)', async () => {
    seenByFirst.length = 0;
    seenBySecond.length = 0;
    expect((await fetch(`${second.url}/open/private`)).status).toBe(403);
    expect(seenBySecond).toEqual(['auth /open/private']);
    expect(seenByFirst).toEqual([]);
  });

  it('refuses to bind a handler two controllers share when they need different guards', async () => {
    @Controller('base')
    class BaseController {
      @Get()
      read(): { ok: true } {
        return { ok: true };
      }
    }
    @Controller('derived')
    @Public()
    class DerivedController extends BaseController {}
    @Module({ controllers: [BaseController, DerivedController] })
    class SharingModule {}
    const app = await NestFactory.create<NestExpressApplication>(SharingModule, { logger: false });
    try {
      expect(() =>
        bindRouteGuards(app, { authenticate: new RecordingGuard('auth', []), parseBody: new RecordingGuard('body', []) }),
      ).toThrow(/shares with other guard needs/);
    } finally {
      await app.close();
    }
  });
});
