import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { MODULE_DECLARATIONS } from '../declarations.js';
import { buildAdminNavLinks, type AdminNavLinks } from './admin-nav.builder.js';

export interface AdminNavPayload extends AdminNavLinks {
  grantedFeatures: string[];
  roles: string[];
}

/** The backend chrome, built from the modules' declarations. */
@Injectable()
export class NavigationService {
  /** Not personalised: sidebar preferences are applied by the client (GET /auth/sidebar/preferences). */
  adminNav(auth: AuthContext): AdminNavPayload {
    return {
      ...buildAdminNavLinks(MODULE_DECLARATIONS, (required) => auth.can(...required)),
      grantedFeatures: auth.isSuperAdmin ? ['*'] : [...auth.acl.features],
      roles: [...auth.acl.roleNames],
    };
  }
}
