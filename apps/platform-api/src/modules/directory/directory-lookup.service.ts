import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import { SLUG_PATTERN } from './organization-slug.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { TenantsRepository } from './tenants.repository.js';

/** decisions.md "Directory": 60 lookups per minute per IP, both lookups together, across instances. */
export const DIRECTORY_LOOKUP_RULE: RateRule = { name: 'directory-lookup', points: 60, durationSeconds: 60 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Public lookups (login pages resolve a tenant or an organization before anyone is signed in).
 * Inactive tenants and organizations, and organizations of an inactive tenant, are not found.
 * Every request counts against the rate limit, malformed ones included.
 */
@Injectable()
export class DirectoryLookupService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tenants: TenantsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly rateLimiter: RateLimiterService,
  ) {}

  async tenant(ip: string, tenantId: unknown): Promise<{ ok: true; tenant: { id: string; name: string } }> {
    await this.rateLimiter.consume([{ rule: DIRECTORY_LOOKUP_RULE, ip }]);
    if (tenantId === undefined || tenantId === '') throw DomainError.badRequest('tenantId is required');
    if (typeof tenantId !== 'string' || !UUID.test(tenantId)) throw DomainError.badRequest('tenantId must be a UUID');
    const tenant = await this.tenants.findActive(this.dataSource, tenantId);
    if (!tenant) throw DomainError.notFound('tenant not found');
    return { ok: true, tenant: { id: tenant.id, name: tenant.name } };
  }

  async organization(ip: string, slug: unknown): Promise<{ ok: true; organization: { id: string; name: string; slug: string } }> {
    await this.rateLimiter.consume([{ rule: DIRECTORY_LOOKUP_RULE, ip }]);
    if (slug === undefined || slug === '') throw DomainError.badRequest('slug is required');
    if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug)) throw DomainError.badRequest('slug must match ^[a-z0-9][a-z0-9-]{0,62}$');
    const org = await this.organizations.findActiveBySlug(this.dataSource, slug);
    if (!org) throw DomainError.notFound('organization not found');
    return { ok: true, organization: { id: org.id, name: org.name, slug: org.slug } };
  }
}
