import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError, type Db } from '@app/service-kit';
import type { CommandDefinition } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { scopeOf, type TenantScope } from '../../core/scope/tenant-scope.js';
import { callerLocale } from './sidebar-locale.js';
import { restoreVariantSet, snapshotVariantSet, variantSetResourceId } from './sidebar-snapshot.js';
import { normalizeSidebarSettings, type SidebarSettings } from './sidebar-settings.js';
import { SIDEBAR_MANAGE_FEATURE, type CreateSidebarVariantDto } from './sidebar.dto.js';
import { SidebarRepository, type SidebarVariantRow } from './sidebar.repository.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';

export const AUTO_VARIANT_NAME = 'My preferences';
const MAX_ATTEMPTS = 3;

export interface SidebarVariant {
  id: string;
  name: string;
  isActive: boolean;
  settings: SidebarSettings;
  createdAt: string;
  updatedAt: string | null;
}

/** The lowest free of `base`, `base 2`, `base 3`, ... given the names already taken. */
export function lowestFreeName(base: string, taken: Iterable<string>): string {
  const names = new Set(taken);
  if (!names.has(base)) return base;
  for (let n = 2; ; n += 1) {
    if (!names.has(`${base} ${n}`)) return `${base} ${n}`;
  }
}

function serialize(row: SidebarVariantRow): SidebarVariant {
  return {
    id: row.id,
    name: row.name,
    isActive: row.is_active,
    settings: normalizeSidebarSettings(row.settings),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: row.updated_at ? new Date(row.updated_at).toISOString() : null,
  };
}

interface CreateVariantInput {
  resourceId: string;
  locale: string;
  explicitName: string | null;
  settings: SidebarSettings;
  isActive: boolean;
}

/** Named sidebar variants per user + tenant + locale; at most one active. */
@Injectable()
export class SidebarVariantsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: SidebarRepository,
    private readonly bus: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.createCommand);
  }

  /**
   * POST /auth/sidebar/variants. The resource is the caller's variant set (tenant, user, locale), so the
   * undo deletes the new variant and re-activates the one an active create deactivated.
   */
  private readonly createCommand: CommandDefinition<CreateVariantInput, { locale: string; variant: SidebarVariant }> = {
    id: 'auth.sidebar.variants.create',
    features: [SIDEBAR_MANAGE_FEATURE],
    label: 'Create sidebar variant',
    actionType: 'create',
    resourceKind: 'auth.sidebar_variants',
    targetId: (input) => input.resourceId,
    snapshot: (tx, resourceId) => snapshotVariantSet(this.repo, tx, resourceId),
    restore: (tx, resourceId, snapshot) => restoreVariantSet(this.repo, tx, resourceId, snapshot),
    execute: async (tx, auth, input) => {
      const { locale, explicitName, isActive, settings } = input;
      const scope = scopeOf(auth);
      await this.repo.lockVariants(tx, scope, locale);
      const name = explicitName ?? (await this.autoName(tx, scope, locale));
      if (explicitName && (await this.repo.variantNameExists(tx, scope, { locale, name: explicitName }))) {
        throw this.duplicateName();
      }
      if (isActive) await this.repo.deactivateVariants(tx, scope, locale);
      const row = await this.repo.insertVariant(tx, scope, { locale, name, isActive, settings });
      return {
        resourceId: input.resourceId,
        parent: { kind: 'auth.user', id: auth.userId },
        result: { locale, variant: serialize(row) },
      };
    },
  };

  async list(auth: AuthContext): Promise<{ locale: string; variants: SidebarVariant[] }> {
    const scope = scopeOf(auth);
    const locale = await callerLocale(this.repo, this.dataSource, scope);
    const rows = await this.repo.listVariants(this.dataSource, scope, locale);
    return { locale, variants: rows.map(serialize) };
  }

  /**
   * Creates a variant. Writes of one user are serialised by an advisory lock, so two concurrent
   * posts can neither pick the same automatic name nor both stay active; a unique violation (a
   * writer that bypassed the lock) is retried for automatic names and is a 409 for explicit ones.
   * Runs as the undoable command `auth.sidebar.variants.create`.
   */
  async create(auth: AuthContext, input: CreateSidebarVariantDto): Promise<{ locale: string; variant: SidebarVariant }> {
    const explicitName = input.name?.trim() || null;
    const settings = normalizeSidebarSettings(input.settings ?? {});
    const isActive = input.isActive === true;
    const locale = await callerLocale(this.repo, this.dataSource, scopeOf(auth));
    const resourceId = variantSetResourceId({ tenantId: auth.tenantId, userId: auth.userId, locale });
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.bus.execute(auth, this.createCommand, { resourceId, locale, explicitName, settings, isActive });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (explicitName || attempt >= MAX_ATTEMPTS) throw this.duplicateName();
      }
    }
  }

  private async autoName(tx: Db, scope: TenantScope, locale: string): Promise<string> {
    const taken = await this.repo.takenAutoNames(tx, scope, { locale, base: AUTO_VARIANT_NAME });
    return lowestFreeName(AUTO_VARIANT_NAME, taken);
  }

  private duplicateName(): DomainError {
    return new DomainError('duplicate_name', 'a variant with this name already exists', { status: 409 });
  }
}
