import type { ModuleDeclaration } from '../../core/features/declarations.js';

/** The queue dashboard's write permission (reading it is for super administrators, writing needs this too). */
export const QUEUES_MANAGE_FEATURE = 'queues.manage';

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
