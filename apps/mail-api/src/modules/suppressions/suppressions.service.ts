import { Injectable } from '@nestjs/common';
import { isEmail } from 'class-validator';
import { DataSource } from 'typeorm';
import { ErrorCode, type MailList } from '@app/contracts';
import { DomainError, type Db } from '@app/service-kit';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { csvRecordBatches } from './suppression-csv.js';
import {
  MAX_EMAIL,
  SUPPRESSION_REASONS,
  type ListSuppressionsQuery,
  type MailSuppression,
  type MailSuppressionImport,
  type SuppressionReason,
} from './suppressions.dto.js';
import { SuppressionsRepository, toSuppression, type SuppressionToAdd } from './suppressions.repository.js';

/** Rows a CSV import may hold (the header row not counted). */
export const MAX_IMPORT_ROWS = 1_000_000;
/** Rows inserted per statement during an import. */
const IMPORT_BATCH = 5000;

/**
 * A project's suppression list: the addresses it never mails again. Listed by the API (MANUAL, `api`),
 * by a CSV import, and by delivery itself (hard bounces, complaints: `suppress`). The first entry of an
 * address is kept. Delivery reads the list in its claim statement (EmailDeliveryRepository).
 */
@Injectable()
export class SuppressionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly suppressions: SuppressionsRepository,
  ) {}

  async list(project: ProjectContext, query: ListSuppressionsQuery): Promise<MailList<MailSuppression>> {
    const { rows, total } = await this.suppressions.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      reason: query.reason,
      search: query.search || undefined,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return { items: page.map(toSuppression), nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }

  /** `created`: false when the address was listed already (the first entry is answered, unchanged). */
  async add(project: ProjectContext, email: string): Promise<{ created: boolean; suppression: MailSuppression }> {
    const scope = scopeOf(project);
    const row = await this.suppressions.insert(this.dataSource, scope, { email, reason: 'MANUAL', source: 'api', detail: null });
    if (row) return { created: true, suppression: toSuppression(row) };
    const existing = await this.suppressions.findByEmail(this.dataSource, scope, email);
    if (!existing) throw new Error('suppression vanished between insert and read'); // deleted concurrently
    return { created: false, suppression: toSuppression(existing) };
  }

  async remove(project: ProjectContext, email: string): Promise<void> {
    if (!(await this.suppressions.delete(this.dataSource, scopeOf(project), email))) throw DomainError.notFound('suppression not found');
  }

  /**
   * A CSV body (header row with an `email` column, optional `reason`), read as it arrives, inserted
   * IMPORT_BATCH rows per statement in one transaction: a file over MAX_IMPORT_ROWS rows, or without
   * an `email` column, changes nothing (422).
   */
  async import(
    project: ProjectContext,
    input: { contentType: string | undefined; body: AsyncIterable<Buffer | string> },
  ): Promise<MailSuppressionImport> {
    const mediaType = (input.contentType ?? '').split(';')[0].trim().toLowerCase();
    if (mediaType !== 'text/csv') {
      throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'send the import as `Content-Type: text/csv`', { status: 415 });
    }
    const scope = scopeOf(project);
    const body = input.body;
    return this.dataSource.transaction((tx) => this.importInto(tx, scope, body));
  }

  private async importInto(tx: Db, scope: ProjectScope, body: AsyncIterable<Buffer | string>): Promise<MailSuppressionImport> {
    const totals = { imported: 0, skipped: 0, invalid: 0 };
    let columns: { email: number; reason: number } | null = null;
    let rows = 0;
    for await (const records of csvRecordBatches(body, { batchSize: IMPORT_BATCH, maxRecordChars: 2000 })) {
      let start = 0;
      if (!columns) {
        columns = headerColumns(records[0]);
        start = 1;
      }
      const valid: SuppressionToAdd[] = [];
      for (let i = start; i < records.length; i++) {
        const entry = importRow(records[i], columns);
        if (entry) valid.push(entry);
        else totals.invalid += 1;
      }
      rows += records.length - start;
      if (rows > MAX_IMPORT_ROWS) throw tooManyRows();
      const added = await this.suppressions.insertMany(tx, scope, { rows: valid });
      totals.imported += added;
      totals.skipped += valid.length - added;
    }
    if (!columns) throw invalidCsv('the body is empty: send a header row with an `email` column, then one address per row');
    return totals;
  }
}

function headerColumns(header: string[]): { email: number; reason: number } {
  const names = header.map((h) => h.trim().toLowerCase());
  const email = names.indexOf('email');
  if (email < 0) throw invalidCsv('the first row must be a header naming an `email` column');
  return { email, reason: names.indexOf('reason') };
}

function importRow(record: string[], columns: { email: number; reason: number }): SuppressionToAdd | null {
  const email = (record[columns.email] ?? '').trim();
  if (email.length === 0 || email.length > MAX_EMAIL || !isEmail(email)) return null;
  const reasonText = columns.reason >= 0 ? (record[columns.reason] ?? '').trim().toUpperCase() : '';
  const reason = (reasonText || 'MANUAL') as SuppressionReason;
  if (!SUPPRESSION_REASONS.includes(reason)) return null;
  return { email, reason, source: 'api', detail: null };
}

function invalidCsv(message: string): DomainError {
  return new DomainError(ErrorCode.ValidationError, message, { status: 422, details: [{ field: 'body', message, code: 'csv' }] });
}

function tooManyRows(): DomainError {
  const message = `an import holds at most ${MAX_IMPORT_ROWS} rows; split the file`;
  return new DomainError(ErrorCode.PayloadTooLarge, message, { status: 413 });
}
