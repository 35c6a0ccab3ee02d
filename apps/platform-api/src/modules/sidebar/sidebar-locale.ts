import type { Db } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { DEFAULT_LOCALE } from '../auth/profile.service.js';
import type { SidebarRepository } from './sidebar.repository.js';

/** Preferences and variants are kept per locale: the scope user's stored locale (users.locale), default 'en'. */
export async function callerLocale(repo: SidebarRepository, db: Db, scope: TenantScope): Promise<string> {
  return (await repo.userLocale(db, scope)) ?? DEFAULT_LOCALE;
}
