import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { callerLocale } from './sidebar-locale.js';
import { normalizeSidebarSettings, type SidebarSettings } from './sidebar-settings.js';
import type { CreateSidebarVariantDto } from './sidebar.dto.js';
import { SidebarRepository, type SidebarVariantRow } from './sidebar.repository.js';

export const AUTO_VARIANT_NAME = 'My preferences';
const UNIQUE_VIOLATION = '23505';
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

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } };
  return e?.code === UNIQUE_VIOLATION || e?.driverError?.code === UNIQUE_VIOLATION;
}

/** Named sidebar variants per user + tenant + locale; at most one active. */
@Injectable()
export class SidebarVariantsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: SidebarRepository,
  ) {}

  async list(auth: AuthContext): Promise<{ locale: string; variants: SidebarVariant[] }> {
    const db = this.dataSource.manager;
    const locale = await callerLocale(this.repo, db, auth);
    const rows = await this.repo.listVariants(db, auth.tenantId, auth.userId, locale);
    return { locale, variants: rows.map(serialize) };
  }

  /**
   * Creates a variant. Writes of one user are serialised by an advisory lock, so two concurrent
   * posts can neither pick the same automatic name nor both stay active; a unique violation (a
   * writer that bypassed the lock) is retried for automatic names and is a 409 for explicit ones.
   */
  async create(auth: AuthContext, input: CreateSidebarVariantDto): Promise<{ locale: string; variant: SidebarVariant }> {
    const explicitName = input.name?.trim() || null;
    const settings = normalizeSidebarSettings(input.settings ?? {});
    const isActive = input.isActive === true;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.dataSource.transaction(async (tx) => {
          const locale = await callerLocale(this.repo, tx, auth);
          await this.repo.lockVariants(tx, auth.tenantId, auth.userId, locale);
          const name = explicitName ?? (await this.autoName(tx, auth, locale));
          if (explicitName && (await this.repo.variantNameExists(tx, auth.tenantId, auth.userId, locale, explicitName))) {
            throw this.duplicateName();
          }
          if (isActive) await this.repo.deactivateVariants(tx, auth.tenantId, auth.userId, locale);
          const row = await this.repo.insertVariant(tx, { tenantId: auth.tenantId, userId: auth.userId, locale, name, isActive, settings });
          return { locale, variant: serialize(row) };
        });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (explicitName || attempt >= MAX_ATTEMPTS) throw this.duplicateName();
      }
    }
  }

  private async autoName(tx: Parameters<SidebarRepository['takenAutoNames']>[0], auth: AuthContext, locale: string): Promise<string> {
    const taken = await this.repo.takenAutoNames(tx, auth.tenantId, auth.userId, locale, AUTO_VARIANT_NAME);
    return lowestFreeName(AUTO_VARIANT_NAME, taken);
  }

  private duplicateName(): DomainError {
    return new DomainError('duplicate_name', 'a variant with this name already exists', { status: 409 });
  }
}
