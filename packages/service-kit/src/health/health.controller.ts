import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@app/contracts';
import { DomainError } from '../errors/domain-error.js';
import { REDIS } from '../queue/redis.js';
import { Public } from '../http/public.decorator.js';

const CHECK_TIMEOUT_MS = 2000;

/** The probes' 200 bodies, for the OpenAPI document. */
class LivenessDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

class ReadinessChecksDto {
  @ApiProperty({ enum: ['ok'] }) database: 'ok';
  @ApiProperty({ enum: ['ok'] }) redis: 'ok';
}

class ReadinessDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ type: ReadinessChecksDto, description: 'Each dependency; any other value answers 503 instead.' })
  checks: ReadinessChecksDto;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

@ApiTags('probes')
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process is up. No auth.' })
  @ApiOkResponse({ type: LivenessDto })
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer; 503 otherwise. No auth.' })
  @ApiOkResponse({ type: ReadinessDto })
  async readyz(): Promise<{ status: 'ok'; checks: Record<string, string> }> {
    const [database, redis] = await Promise.all([this.check(() => this.dataSource.query('SELECT 1')), this.check(() => this.redis.ping())]);
    const checks = { database, redis };
    if (database !== 'ok' || redis !== 'ok') {
      const failing = Object.entries(checks)
        .filter(([, v]) => v !== 'ok')
        .map(([k]) => k);
      throw new DomainError(ErrorCode.NotReady, `not ready: ${failing.join(', ')} unavailable`, { status: 503 });
    }
    return { status: 'ok', checks };
  }

  private async check(probe: () => Promise<unknown>): Promise<string> {
    try {
      await withTimeout(probe(), CHECK_TIMEOUT_MS);
      return 'ok';
    } catch {
      return 'unavailable';
    }
  }
}
