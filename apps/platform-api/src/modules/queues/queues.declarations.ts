import { QUEUES_MANAGE_FEATURE } from '../../core/auth/queue-dashboard-access.js';
import type { ModuleDeclaration } from '../../core/features/declarations.js';

/** Features of the operator queue dashboard at `/admin/queues`. */
export const QUEUES_MODULE: ModuleDeclaration = {
  id: 'queues',
  title: 'Queues',
  features: [
    {
      id: QUEUES_MANAGE_FEATURE,
      title: 'Retry, promote and clean jobs in the queue dashboard (super administrators who hold it explicitly)',
    },
  ],
};
