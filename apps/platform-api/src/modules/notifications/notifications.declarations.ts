import type { ModuleDeclaration } from '../../core/features/declarations.js';

/**
 * Features of the notifications module. Reading and changing one's own notifications needs no
 * feature; no navigation items (the bell is part of the chrome, not a page).
 */
export const NOTIFICATIONS_MODULE: ModuleDeclaration = {
  id: 'notifications',
  title: 'Notifications',
  features: [
    { id: 'notifications.create', title: 'Send notifications to users, roles and feature holders' },
    { id: 'notifications.manage', title: 'Manage notification delivery settings' },
  ],
};
