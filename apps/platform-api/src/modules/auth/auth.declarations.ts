import type { ModuleDeclaration } from '../../core/features/declarations.js';

/** Features and navigation of the accounts and access-control module. */
export const AUTH_MODULE: ModuleDeclaration = {
  id: 'auth',
  title: 'Authentication and accounts',
  features: [
    { id: 'auth.users.list', title: 'List users' },
    { id: 'auth.users.create', title: 'Create and invite users' },
    { id: 'auth.users.edit', title: 'Edit users' },
    { id: 'auth.users.delete', title: 'Delete users' },
    { id: 'auth.roles.list', title: 'List roles' },
    { id: 'auth.roles.manage', title: 'Create, edit and delete roles' },
    { id: 'auth.acl.manage', title: 'Manage role and user access' },
    { id: 'auth.sidebar.manage', title: 'Customise the sidebar' },
  ],
  nav: [
    {
      group: 'Administration',
      items: [
        { href: '/backend/users', title: 'Users', requires: ['auth.users.list'] },
        { href: '/backend/roles', title: 'Roles', requires: ['auth.roles.list'] },
      ],
    },
  ],
  settingsSections: [
    {
      id: 'access',
      label: 'Access control',
      items: [
        { id: 'users', label: 'Users', href: '/backend/settings/users', requires: ['auth.users.list'] },
        { id: 'roles', label: 'Roles', href: '/backend/settings/roles', requires: ['auth.roles.list'] },
        { id: 'features', label: 'Features', href: '/backend/settings/features', requires: ['auth.acl.manage'] },
      ],
    },
  ],
  profileSections: [
    {
      id: 'account',
      label: 'Account',
      items: [
        { id: 'profile', label: 'Profile', href: '/backend/profile', requires: [] },
        { id: 'sidebar', label: 'Sidebar', href: '/backend/profile/sidebar', requires: ['auth.sidebar.manage'] },
      ],
    },
  ],
};
