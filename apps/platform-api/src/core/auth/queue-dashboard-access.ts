import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { DomainError, type QueueDashboardAccess, type QueueDashboardWrite } from '@app/service-kit';
import { ActionLogsRepository } from '../audit/action-logs.repository.js';
import { scopeOf } from '../scope/tenant-scope.js';
import type { AuthenticatedRequest } from './auth.decorators.js';
import { hasFeature } from './feature-match.js';

/** The queue dashboard's write permission (reading it is for super administrators, writing needs this too). */
export const QUEUES_MANAGE_FEATURE = 'queues.manage';

/**
 * The operator pages of the platform (the queue dashboard) are for super administrators: the one
 * AuthGuard has authenticated the caller (401 without a valid token or cookie); anyone else is 403.
 */
export function superAdministratorsOnly(req: Request): void {
  if (!(req as AuthenticatedRequest).auth?.isSuperAdmin) throw DomainError.forbidden('the queue dashboard is for super administrators');
}

const LABELS: Record<QueueDashboardWrite['action'], string> = { retry: 'Retry jobs', promote: 'Promote jobs', clean: 'Clean jobs' };

/**
 * The platform's queue dashboard: super administrators read it; writes (retry, promote, clean) need
 * `queues.manage` granted explicitly in their ACL (being a super administrator, which implies every
 * other feature, is not enough), and each one is an action log entry (source `queue_dashboard`)
 * written before it runs.
 */
@Injectable()
export class PlatformQueueDashboardAccess implements QueueDashboardAccess {
  constructor(
    private readonly dataSource: DataSource,
    private readonly logs: ActionLogsRepository,
  ) {}

  authorize(req: Request): void {
    superAdministratorsOnly(req);
  }

  canWrite(req: Request): boolean {
    const auth = (req as AuthenticatedRequest).auth;
    return auth.isSuperAdmin && hasFeature(auth.acl.features, QUEUES_MANAGE_FEATURE);
  }

  async recordWrite(req: Request, write: QueueDashboardWrite): Promise<void> {
    const auth = (req as AuthenticatedRequest).auth;
    await this.logs.insert(this.dataSource.manager, scopeOf(auth), {
      organizationId: auth.organizationId,
      commandId: `queues.${write.action}`,
      label: LABELS[write.action],
      actionType: write.action === 'clean' ? 'delete' : 'edit',
      resourceKind: write.jobId ? 'queue_job' : 'queue',
      resourceId: write.jobId ? `${write.queue}/${write.jobId}` : write.queue,
      parent: write.jobId ? { kind: 'queue', id: write.queue } : null,
      before: null,
      undoToken: null,
      source: 'queue_dashboard',
      context: { queue: write.queue, jobId: write.jobId, status: write.status },
      after: null,
      changes: {},
    });
  }
}
