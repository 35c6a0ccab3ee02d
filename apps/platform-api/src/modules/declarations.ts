import type { ModuleDeclaration } from '../core/features/declarations.js';
import { AI_ASSISTANT_MODULE } from './ai-assistant/ai-assistant.declarations.js';
import { ATTACHMENTS_MODULE } from './attachments/attachments.declarations.js';
import { AUDIT_LOGS_MODULE } from './audit-logs/audit-logs.declarations.js';
import { AUTH_MODULE } from './auth/auth.declarations.js';
import { DIRECTORY_MODULE } from './directory/directory.declarations.js';
import { NOTIFICATIONS_MODULE } from './notifications/notifications.declarations.js';
import { QUEUES_MODULE } from './queues/queues.declarations.js';

/** Every module's declared features and navigation, in display order. Add a module here when it declares some. */
export const MODULE_DECLARATIONS: ModuleDeclaration[] = [
  AUTH_MODULE,
  DIRECTORY_MODULE,
  AUDIT_LOGS_MODULE,
  NOTIFICATIONS_MODULE,
  ATTACHMENTS_MODULE,
  AI_ASSISTANT_MODULE,
  QUEUES_MODULE,
];
