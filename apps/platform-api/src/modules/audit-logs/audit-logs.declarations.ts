import type { ModuleDeclaration } from '../../core/features/declarations.js';

/** Features and navigation of the audit and action logs. */
export const AUDIT_LOGS_MODULE: ModuleDeclaration = {
  id: 'audit_logs',
  title: 'Audit logs',
  features: [
    { id: 'audit_logs.view_self', title: 'View and export own audit logs' },
    { id: 'audit_logs.view_tenant', title: 'View and export the audit logs of the whole tenant' },
    { id: 'audit_logs.undo_self', title: 'Undo own actions' },
    { id: 'audit_logs.redo_self', title: 'Redo own undone actions' },
  ],
  nav: [
    {
      group: 'Administration',
      items: [{ href: '/backend/audit-logs', title: 'Audit logs', requires: ['audit_logs.view_self'] }],
    },
  ],
};
