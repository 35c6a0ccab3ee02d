import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { scopeOf, systemScope, type TenantScope } from '../../core/scope/tenant-scope.js';
import { NotificationRecipientsRepository } from './notification-recipients.repository.js';
import { NotificationWriter } from './notification-writer.service.js';
import type {
  BatchNotificationDto,
  CreateNotificationDto,
  FeatureNotificationDto,
  NotificationFieldsDto,
  RoleNotificationDto,
} from './notifications.dto.js';
import { NotificationsRepository, type BatchRef } from './notifications.repository.js';
import {
  NotificationsQueueProducer,
  type NotificationContent,
  type NotificationFanOutPayload,
  type NotificationFanOutTarget,
} from './notifications.queue.js';

/** Rows per INSERT of a fan-out: bounds each transaction and lets events flow while the rest is written. */
export const FAN_OUT_CHUNK_SIZE = 1000;
/** Chunks of one fan-out written at once (each on its own pooled connection). */
export const FAN_OUT_PARALLEL_CHUNKS = 3;

export interface SentResult {
  ok: true;
  count: number;
  ids: string[];
  batchId: string;
}

/** Senders' side: one user, a list of users, a role's members or a feature's holders. */
@Injectable()
export class NotificationDispatchService {
  private readonly logger = new Logger(NotificationDispatchService.name);
  /** Rows per chunk of a fan-out (tests lower it to exercise several chunks). */
  chunkSize = FAN_OUT_CHUNK_SIZE;
  /** Chunks written at once (tests set 1 to fail a given chunk). */
  parallelChunks = FAN_OUT_PARALLEL_CHUNKS;

  constructor(
    private readonly dataSource: DataSource,
    private readonly recipients: NotificationRecipientsRepository,
    private readonly repository: NotificationsRepository,
    private readonly writer: NotificationWriter,
    private readonly queue: NotificationsQueueProducer,
  ) {}

  /** 201 {id}: the new notification, or the recipient's active one with the same groupKey. */
  async create(auth: AuthContext, dto: CreateNotificationDto): Promise<{ id: string }> {
    const content = toContent(dto);
    const scope = scopeOf(auth);
    const found = await this.recipients.existingUsers(this.dataSource, scope, [dto.recipientUserId]);
    if (found.length === 0) throw DomainError.notFound('recipient not found');
    const batch = newBatch(auth);
    const [row] = await this.writer.write(scope, { batch, content, recipientIds: found });
    if (row) {
      await this.writer.finishBatch(scope, batch);
      return { id: row.id };
    }
    const existing = content.groupKey
      ? await this.repository.activeIdOfGroup(this.dataSource, scope, { recipientUserId: dto.recipientUserId, groupKey: content.groupKey })
      : null;
    if (!existing) throw DomainError.conflict('notification was not created; retry');
    return { id: existing };
  }

  /** Up to 1000 recipients, written in the request. Recipients deduplicated by groupKey are not counted. */
  async batch(auth: AuthContext, dto: BatchNotificationDto): Promise<SentResult> {
    const content = toContent(dto);
    const scope = scopeOf(auth);
    const wanted = [...new Set(dto.recipientUserIds.map((id) => id.toLowerCase()))];
    const found = new Set(await this.recipients.existingUsers(this.dataSource, scope, wanted));
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length) throw DomainError.notFound(`recipients not found: ${missing.join(', ')}`);
    const batch = newBatch(auth);
    const rows = await this.writer.write(scope, { batch, content, recipientIds: wanted });
    await this.writer.finishBatch(scope, batch);
    return { ok: true, count: rows.length, ids: rows.map((r) => r.id), batchId: batch.batchId };
  }

  async toRole(auth: AuthContext, dto: RoleNotificationDto): Promise<SentResult> {
    const content = toContent(dto);
    const scope = scopeOf(auth);
    if (!(await this.recipients.roleVisible(this.dataSource, scope, dto.roleId))) throw DomainError.notFound('role not found');
    const count = await this.recipients.countRoleMembers(this.dataSource, scope, dto.roleId);
    return this.enqueueFanOut(auth, { kind: 'role', roleId: dto.roleId }, content, count);
  }

  async toFeature(auth: AuthContext, dto: FeatureNotificationDto): Promise<SentResult> {
    const content = toContent(dto);
    const count = await this.recipients.countUsersWithFeature(this.dataSource, scopeOf(auth), dto.requiredFeature);
    return this.enqueueFanOut(auth, { kind: 'feature', requiredFeature: dto.requiredFeature }, content, count);
  }

  /**
   * The fan-out job: resolves the recipients now (membership may have changed since the request) and
   * writes them chunk by chunk. Every chunk is idempotent (unique batch + recipient), so a retry after
   * a crash halfway redoes nothing that was committed, and a duplicate delivery writes nothing.
   */
  async processFanOut(payload: NotificationFanOutPayload): Promise<{ recipients: number; written: number }> {
    const { target } = payload;
    const scope = systemScope(payload.tenantId);
    const recipientIds = await this.recipientsOf(scope, target);
    const batch: BatchRef = { batchId: payload.batchId, createdByUserId: payload.createdByUserId };
    const chunks: string[][] = [];
    for (let i = 0; i < recipientIds.length; i += this.chunkSize) chunks.push(recipientIds.slice(i, i + this.chunkSize));
    const written = await this.writeChunks(scope, { batch, content: payload.content, chunks });
    await this.writer.finishBatch(scope, batch);
    this.logger.log(
      { batchId: payload.batchId, target: target.kind, recipients: recipientIds.length, written },
      'notification fan-out done',
    );
    return { recipients: recipientIds.length, written };
  }

  /**
   * A few chunks at once, each its own transaction on its own pooled connection: one INSERT runs on
   * one Postgres backend (one core), and the database, not this process, bounds a fan-out. Chunks hold
   * disjoint recipients, so they neither conflict nor wait for one another. After a failure no new
   * chunk starts, and the ones in flight finish before the job fails (its retry then finds them).
   */
  private async writeChunks(
    scope: TenantScope,
    input: { batch: BatchRef; content: NotificationContent; chunks: string[][] },
  ): Promise<number> {
    let written = 0;
    let next = 0;
    const failures: unknown[] = [];
    const lane = async () => {
      while (failures.length === 0 && next < input.chunks.length) {
        const recipientIds = input.chunks[next++];
        try {
          // Read `written` after the await: `written += await ...` would add to a value read before it.
          const rows = await this.writer.write(scope, { batch: input.batch, content: input.content, recipientIds });
          written += rows.length;
        } catch (error) {
          failures.push(error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.parallelChunks, input.chunks.length) }, lane));
    if (failures.length > 0) throw failures[0];
    return written;
  }

  private recipientsOf(scope: TenantScope, target: NotificationFanOutTarget): Promise<string[]> {
    return target.kind === 'role'
      ? this.recipients.roleMembers(this.dataSource, scope, target.roleId)
      : this.recipients.usersWithFeature(this.dataSource, scope, target.requiredFeature);
  }

  private async enqueueFanOut(
    auth: AuthContext,
    target: NotificationFanOutTarget,
    content: NotificationContent,
    count: number,
  ): Promise<SentResult> {
    const batch = newBatch(auth);
    if (count > 0) {
      await this.queue.fanOut({
        batchId: batch.batchId,
        tenantId: auth.tenantId,
        createdByUserId: auth.userId,
        target,
        content,
        requestedAt: new Date().toISOString(),
      });
    }
    return { ok: true, count, ids: [], batchId: batch.batchId };
  }
}

function newBatch(auth: AuthContext): BatchRef {
  return { batchId: randomUUID(), createdByUserId: auth.userId };
}

/** The sender's fields as stored: defaults applied, and the checks a DTO cannot express. */
export function toContent(dto: NotificationFieldsDto): NotificationContent {
  const actions = (dto.actions ?? []).map((a) => ({ id: a.id, label: a.label }));
  if (new Set(actions.map((a) => a.id)).size !== actions.length) throw DomainError.badRequest('action ids must be unique');
  if (dto.expiresAt && new Date(dto.expiresAt).getTime() <= Date.now()) throw DomainError.badRequest('expiresAt must be in the future');
  return {
    type: dto.type,
    severity: dto.severity,
    title: dto.title ?? dto.titleKey ?? dto.type,
    body: dto.body ?? null,
    titleKey: dto.titleKey ?? null,
    bodyKey: dto.bodyKey ?? null,
    titleVariables: dto.titleVariables ?? null,
    bodyVariables: dto.bodyVariables ?? null,
    icon: dto.icon ?? null,
    actions,
    sourceModule: dto.sourceModule ?? null,
    sourceEntityType: dto.sourceEntityType ?? null,
    sourceEntityId: dto.sourceEntityId ?? null,
    linkHref: dto.linkHref ?? null,
    groupKey: dto.groupKey ?? null,
    expiresAt: dto.expiresAt ? new Date(dto.expiresAt).toISOString() : null,
  };
}
