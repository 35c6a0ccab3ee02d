import { Organization } from '../../modules/directory/organization.entity.js';
import { Tenant } from '../../modules/directory/tenant.entity.js';
import { RoleAcl } from '../../modules/auth/role-acl.entity.js';
import { Role } from '../../modules/auth/role.entity.js';
import { UserRole } from '../../modules/auth/user-role.entity.js';
import { User } from '../../modules/auth/user.entity.js';
import { Session } from '../../modules/auth/session.entity.js';
import { AuthToken } from '../../modules/auth/auth-token.entity.js';
import { UserAcl } from '../../modules/auth/user-acl.entity.js';
import { Notification } from '../../modules/notifications/notification.entity.js';
import { NotificationSettingsRow } from '../../modules/notifications/notification-settings.entity.js';

export const PLATFORM_ENTITIES = [
  Tenant,
  Organization,
  User,
  Role,
  UserRole,
  RoleAcl,
  UserAcl,
  Session,
  AuthToken,
  Notification,
  NotificationSettingsRow,
];
