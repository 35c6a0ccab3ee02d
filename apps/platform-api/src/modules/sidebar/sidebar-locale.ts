import { DEFAULT_LOCALE } from '../auth/profile.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import type { SidebarRepository, Sql } from './sidebar.repository.js';

/** Preferences and variants are kept per locale: the caller's stored locale (users.locale), default 'en'. */
export async function callerLocale(repo: SidebarRepository, db: Sql, auth: AuthContext): Promise<string> {
  return (await repo.userLocale(db, auth.tenantId, auth.userId)) ?? DEFAULT_LOCALE;
}
