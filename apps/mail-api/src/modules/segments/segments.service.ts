import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode, type FieldError, type MailContact, type MailList } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage, type IdPageQuery } from '../../core/http/pagination.js';
import { scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { ContactsRepository, toContact } from '../contacts/contacts.repository.js';
import { validateCondition, type SegmentCondition } from './segment-condition.js';
import type { CreateSegmentBody, ListSegmentsQuery, MailSegment, SegmentMembersBody, UpdateSegmentBody } from './segments.dto.js';
import { SegmentsRepository, type SegmentFields, type SegmentRow, type SegmentType } from './segments.repository.js';

/** 409: DELETE of a segment a SCHEDULED or SENDING campaign targets. */
export const SEGMENT_IN_USE = 'SEGMENT_IN_USE';
/** 400: member changes on a DYNAMIC segment (its members follow its condition). */
export const SEGMENT_NOT_STATIC = 'SEGMENT_NOT_STATIC';

function toSegment(row: SegmentRow, memberCount: number): MailSegment {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    condition: row.condition,
    memberCount,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function segmentNotFound(): DomainError {
  return DomainError.notFound('segment not found');
}

function validationError(details: FieldError[]): DomainError {
  return new DomainError(ErrorCode.ValidationError, `validation failed: ${details[0].field} ${details[0].message}`, {
    status: 422,
    details,
  });
}

/**
 * The condition a segment of this type may hold: required and valid for DYNAMIC, absent (or null) for
 * STATIC. Throws the 422 otherwise.
 */
function checkedCondition(type: SegmentType, condition: unknown): SegmentCondition | null {
  if (type === 'STATIC') {
    if (condition === undefined || condition === null) return null;
    throw validationError([
      { field: 'condition', message: 'condition is not allowed for STATIC segments (add members instead)', code: 'conditionNotAllowed' },
    ]);
  }
  if (condition === undefined || condition === null) {
    throw validationError([{ field: 'condition', message: 'condition is required for DYNAMIC segments', code: 'isDefined' }]);
  }
  const errors = validateCondition(condition, 'condition');
  if (errors.length > 0) throw validationError(errors);
  return condition as SegmentCondition;
}

/**
 * Segments of the calling project. Another project's segment is a 404, exactly like a missing one.
 * `memberCount` is counted live on every read; campaigns compile the same audience predicate.
 */
@Injectable()
export class SegmentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly segments: SegmentsRepository,
    private readonly contacts: ContactsRepository,
  ) {}

  async list(project: ProjectContext, query: ListSegmentsQuery): Promise<MailList<MailSegment>> {
    const scope = scopeOf(project);
    const { rows, total } = await this.segments.list(this.dataSource, scope, {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      search: query.search || undefined,
      type: query.type,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    const counts = await this.withoutJit((tx) => this.segments.countMembersOfMany(tx, scope, page));
    return {
      items: page.map((row) => toSegment(row, counts.get(row.id) ?? 0)),
      nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null,
      hasMore,
      total,
    };
  }

  async create(project: ProjectContext, body: CreateSegmentBody): Promise<MailSegment> {
    const fields: SegmentFields = {
      name: body.name,
      description: body.description ?? null,
      type: body.type,
      condition: checkedCondition(body.type, body.condition),
    };
    const scope = scopeOf(project);
    const row = await this.segments.insert(this.dataSource, scope, fields);
    return toSegment(row, await this.memberCount(scope, row));
  }

  async get(project: ProjectContext, id: string): Promise<MailSegment> {
    const row = await this.findRow(project, id);
    return toSegment(row, await this.memberCount(scopeOf(project), row));
  }

  /** Name, description and (DYNAMIC) condition; the type stays. An empty body changes nothing. */
  async update(project: ProjectContext, id: string, body: UpdateSegmentBody): Promise<MailSegment> {
    const current = await this.findRow(project, id);
    if (body.type !== undefined && body.type !== current.type) {
      throw validationError([{ field: 'type', message: `type cannot change (the segment is ${current.type})`, code: 'immutable' }]);
    }
    const patch: Partial<Omit<SegmentFields, 'type'>> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.description !== undefined) patch.description = body.description;
    if (body.condition !== undefined) {
      const condition = checkedCondition(current.type, body.condition);
      if (condition) patch.condition = condition;
    }
    const scope = scopeOf(project);
    const row = Object.keys(patch).length === 0 ? current : await this.segments.update(this.dataSource, scope, { id, patch });
    if (!row) throw segmentNotFound();
    return toSegment(row, await this.memberCount(scope, row));
  }

  /** 409 `SEGMENT_IN_USE` while a SCHEDULED or SENDING campaign targets it. */
  async remove(project: ProjectContext, id: string): Promise<void> {
    if (!isUUID(id)) throw segmentNotFound();
    const scope = scopeOf(project);
    await this.dataSource.transaction(async (tx) => {
      // FOR UPDATE against lockForCampaign's FOR SHARE: a campaign starting to target the segment is either
      // committed before the check below (409) or waits and then finds no segment.
      if (!(await this.segments.findById(tx, scope, { id, lock: 'update' }))) throw segmentNotFound();
      if (await this.segments.isUsedByActiveCampaign(tx, scope, id)) {
        throw new DomainError(SEGMENT_IN_USE, 'segment is used by a SCHEDULED or SENDING campaign', {
          status: 409,
          suggestion: 'Cancel the campaign or wait until it is sent, then delete the segment.',
        });
      }
      await this.segments.delete(tx, scope, id);
    });
  }

  /** Members (DYNAMIC: the contacts matching now), newest first, as contact objects. */
  async listMembers(project: ProjectContext, id: string, query: IdPageQuery): Promise<MailList<MailContact>> {
    const segment = await this.findRow(project, id);
    const input = { segment, beforeId: query.cursor ? decodeCursor(query.cursor) : undefined, limit: query.limit };
    const { rows, total } = await this.withoutJit((tx) => this.segments.listMembers(tx, scopeOf(project), input));
    const { page, hasMore } = takePage(rows, query.limit);
    return { items: page.map(toContact), nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }

  /** Adds contacts by email, creating missing ones (unsubscribed), in one transaction. */
  async addMembers(project: ProjectContext, id: string, body: SegmentMembersBody): Promise<{ added: number }> {
    return this.changeMembers(project, id, async (tx, scope) => {
      await this.contacts.insertMissingUnsubscribed(tx, scope, { emails: body.emails });
      return { added: await this.segments.addMembers(tx, scope, { segmentId: id, emails: body.emails }) };
    });
  }

  async removeMembers(project: ProjectContext, id: string, body: SegmentMembersBody): Promise<{ removed: number }> {
    return this.changeMembers(project, id, async (tx, scope) => ({
      removed: await this.segments.removeMembers(tx, scope, { segmentId: id, emails: body.emails }),
    }));
  }

  private async changeMembers<T>(
    project: ProjectContext,
    id: string,
    change: (tx: EntityManager, scope: ProjectScope) => Promise<T>,
  ): Promise<T> {
    if (!isUUID(id)) throw segmentNotFound();
    const scope = scopeOf(project);
    return this.dataSource.transaction(async (tx) => {
      const segment = await this.segments.findById(tx, scope, { id, lock: 'share' });
      if (!segment) throw segmentNotFound();
      if (segment.type !== 'STATIC') {
        throw new DomainError(SEGMENT_NOT_STATIC, 'members can only be added to or removed from STATIC segments', {
          status: 400,
          suggestion: "A DYNAMIC segment's members are the contacts matching its condition.",
        });
      }
      return change(tx, scope);
    });
  }

  /**
   * For campaigns, inside their transaction: the project's segment, its row share-locked so that a
   * DELETE racing a campaign that starts targeting it waits and then answers SEGMENT_IN_USE. Null
   * when the project has no such segment.
   */
  async lockForCampaign(tx: EntityManager, scope: ProjectScope, id: string): Promise<Pick<SegmentRow, 'id' | 'type' | 'condition'> | null> {
    if (!isUUID(id)) return null;
    const row = await this.segments.findById(tx, scope, { id, lock: 'share' });
    return row && { id: row.id, type: row.type, condition: row.condition };
  }

  private memberCount(scope: ProjectScope, row: SegmentRow): Promise<number> {
    return this.withoutJit((tx) => this.segments.countMembers(tx, scope, row));
  }

  /** Audience reads run in a short read transaction of their own, without JIT (the repository says why). */
  private withoutJit<T>(read: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (tx) => {
      await this.segments.disableJit(tx);
      return read(tx);
    });
  }

  private async findRow(project: ProjectContext, id: string): Promise<SegmentRow> {
    const row = isUUID(id) ? await this.segments.findById(this.dataSource, scopeOf(project), { id }) : null;
    if (!row) throw segmentNotFound();
    return row;
  }
}
