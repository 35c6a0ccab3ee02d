import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { ErrorCode, MailErrorCode } from '@app/contracts';
import { DomainError, routeMetadata } from '@app/service-kit';
import { ApiRateLimiter, type RateLimitState } from '../rate-limit/api-rate-limiter.service.js';
import { PUBLIC_KEY_ALLOWED } from './api-key.decorators.js';
import { PROJECT_CONTEXT_PROPERTY, type ProjectContext } from './project-context.js';
import { ProjectKeyCache } from './project-key-cache.service.js';
import type { ProjectKeyMatch } from './project-keys.repository.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const KEY_SUGGESTION = "send `Authorization: Bearer <key>` with your project's secret key (sk_...)";

/**
 * The authentication guard of the mail API, on every route that is not `@Public()` (bindRouteGuards,
 * from http-setup.ts, decides; mail-api.md "Authentication", decisions.md "Mail"), in this order:
 * no Authorization header → 401 UNAUTHORIZED; a header that is not
 * `Bearer sk_|pk_ + 48 hex`, or a key of no project → 401 INVALID_API_KEY; a disabled project → 403
 * PROJECT_DISABLED; a public key on a route without `@PublicKeyAllowed()` → 403 SECRET_KEY_REQUIRED;
 * then one point of the project's rate limit (429 RATE_LIMIT_EXCEEDED): the secret key's budget, or
 * for a public key the public budgets of the project and of the client address (`req.ip`, which
 * honours TRUST_PROXY). Every response past the rate-limit step carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset`.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ProjectKeyCache,
    private readonly rateLimiter: ApiRateLimiter,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  canActivate(context: ExecutionContext): Promise<boolean> {
    // The HTTP arguments are (req, res, next): `switchToHttp()` would attach three closures per request.
    const req = context.getArgByIndex<{ headers: Record<string, string | string[] | undefined>; ip?: string } & Record<string, unknown>>(0);
    const value = firstHeader(req.headers.authorization);
    if (!value?.trim()) {
      return Promise.reject(new DomainError(ErrorCode.Unauthorized, 'missing API key', { suggestion: KEY_SUGGESTION }));
    }
    const rawKey = BEARER.exec(value)?.[1];
    const match = rawKey ? this.keys.find(rawKey) : null;
    // A cached key answers synchronously: only the rate-limit point is awaited then.
    return match instanceof Promise ? match.then((found) => this.admit(context, req, found)) : this.admit(context, req, match);
  }

  private async admit(
    context: ExecutionContext,
    req: { ip?: string } & Record<string, unknown>,
    match: ProjectKeyMatch | null,
  ): Promise<boolean> {
    const project = projectOf(match);
    if (project.keyKind === 'public' && !routeMetadata<boolean>(this.reflector, context, PUBLIC_KEY_ALLOWED)) {
      throw new DomainError(
        MailErrorCode.SecretKeyRequired,
        'this endpoint requires the secret key (sk_...); public keys only work on POST /v1/track',
        {
          status: 403,
        },
      );
    }
    const rate =
      project.keyKind === 'public'
        ? await this.rateLimiter.consumePublic(project.id, req.ip ?? 'unknown')
        : await this.rateLimiter.consume(project.id);
    const headers = rateLimitHeaders(rate);
    const res = context.getArgByIndex<unknown>(1);
    for (const name in headers) this.adapterHost.httpAdapter.setHeader(res, name, headers[name]);
    if (!rate.allowed) {
      throw new DomainError(ErrorCode.RateLimitExceeded, `rate limit exceeded: ${rate.limit} ${rate.scope}`, {
        headers: { ...headers, 'Retry-After': String(rate.resetSeconds) },
        suggestion: `retry after ${rate.resetSeconds} s`,
      });
    }
    req[PROJECT_CONTEXT_PROPERTY] = project;
    return true;
  }
}

function firstHeader(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

/** 401 for no project, 403 for a disabled one (the order of the class comment). */
function projectOf(match: ProjectKeyMatch | null): ProjectContext {
  if (!match) {
    throw new DomainError(MailErrorCode.InvalidApiKey, 'invalid API key', { status: 401, suggestion: KEY_SUGGESTION });
  }
  if (match.project.disabled) {
    throw new DomainError(MailErrorCode.ProjectDisabled, 'project is disabled', { status: 403 });
  }
  return { id: match.project.id, name: match.project.name, keyKind: match.kind };
}

function rateLimitHeaders(rate: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Limit': String(rate.limit),
    'RateLimit-Remaining': String(rate.remaining),
    'RateLimit-Reset': String(rate.resetSeconds),
  };
}
