import type { ModuleDeclaration } from '../../core/features/declarations.js';

export const DIRECTORY_MODULE: ModuleDeclaration = {
  id: 'directory',
  title: 'Directory',
  features: [
    { id: 'directory.tenants.manage', title: 'Manage tenants' },
    { id: 'directory.organizations.manage', title: 'Manage organizations' },
  ],
  settingsSections: [
    {
      id: 'directory',
      label: 'Directory',
      items: [
        { id: 'tenants', label: 'Tenants', href: '/backend/settings/tenants', requires: ['directory.tenants.manage'] },
        {
          id: 'organizations',
          label: 'Organizations',
          href: '/backend/settings/organizations',
          requires: ['directory.organizations.manage'],
        },
      ],
    },
  ],
};
