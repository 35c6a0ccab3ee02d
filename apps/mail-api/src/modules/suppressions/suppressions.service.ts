import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode, type MailList } from '@app/contracts';
import { DomainError, type Db } from '@app/service-kit';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { isPlainEmailAddress } from './email-address.js';
import { csvRecordBatches } from './suppression-csv.js';
import {
  MAX_EMAIL,
  SUPPRESSION_REASONS,
  type ListSuppressionsQuery,
  type MailSuppression,
  type MailSuppressionImport,
  type SuppressionReason,
} from './suppressions.dto.js';
import { SuppressionsRepository, toSuppression, type StagedRows } from './suppressions.repository.js';

/** Rows a CSV import may hold (the header row not counted). */
export const MAX_IMPORT_ROWS = 1_000_000;
/** Rows staged per statement during an import. */
const IMPORT_BATCH = 10_000;
/** Records the CSV reader hands over at a time (about one request chunk): checked and joined at once. */
const READ_BATCH = 1000;

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
   * A CSV body (header row with an `email` column, optional `reason`), read as it arrives, checked here
   * and staged IMPORT_BATCH rows per statement into a temporary table, then added by one set-based
   * statement, all in one transaction: a file over MAX_IMPORT_ROWS rows, or without an `email` column,
   * changes nothing (413, 422). Memory stays bounded: the body is read only while at most one batch is
   * being written (the request stream's own backpressure) and one more is being parsed.
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
    await this.suppressions.createImportStage(tx);
    const stage = new ImportStage((batch) => this.suppressions.stageImportRows(tx, batch));
    let columns: { email: number; reason: number } | null = null;
    let rows = 0;
    let invalid = 0;
    try {
      for await (const records of csvRecordBatches(body, { batchSize: READ_BATCH, maxRecordChars: 2000 })) {
        let start = 0;
        if (!columns) {
          columns = headerColumns(records[0]);
          start = 1;
        }
        rows += records.length - start;
        if (rows > MAX_IMPORT_ROWS) throw tooManyRows();
        const valid: ImportRow[] = [];
        for (let i = start; i < records.length; i++) {
          const entry = importRow(records[i], columns);
          if (entry) valid.push(entry);
          else invalid += 1;
        }
        await stage.add(valid);
      }
      if (!columns) throw invalidCsv('the body is empty: send a header row with an `email` column, then one address per row');
      await stage.end();
    } finally {
      await stage.settled(); // no statement may still run on the transaction's connection when it ends
    }
    const imported = await this.suppressions.addStaged(tx, scope);
    return { imported, skipped: stage.rows - imported, invalid };
  }
}

/**
 * Collects checked rows and writes them to the staging table IMPORT_BATCH at a time, one write at a time
 * while the caller reads and checks the next rows. Each READ_BATCH of rows is kept as two newline-joined
 * strings at once (a checked address holds no line break): what waits for the database is flat text, not
 * a million small objects, so the API's heap stays small during a million-row import. A failed write
 * surfaces at the next flush or at `end`.
 */
class ImportStage {
  /** Rows handed to the staging table (written or being written). */
  rows = 0;
  private emails: string[] = [];
  private reasons: string[] = [];
  private pending = 0;
  private writing: Promise<unknown> = Promise.resolve();
  private failure: { error: unknown } | null = null;

  constructor(private readonly writeBatch: (batch: StagedRows) => Promise<void>) {}

  async add(rows: ImportRow[]): Promise<void> {
    if (rows.length === 0) return;
    this.emails.push(rows.map((r) => r.email).join('\n'));
    this.reasons.push(rows.map((r) => r.reason).join('\n'));
    this.pending += rows.length;
    if (this.pending >= IMPORT_BATCH) await this.flush();
  }

  async end(): Promise<void> {
    if (this.pending > 0) await this.flush();
    await this.writing;
    if (this.failure) throw this.failure.error;
  }

  async settled(): Promise<void> {
    await this.writing;
  }

  private async flush(): Promise<void> {
    await this.writing; // the previous batch first: at most one written while the next is read
    if (this.failure) throw this.failure.error;
    const batch: StagedRows = { firstSeq: this.rows, emails: this.emails.join('\n'), reasons: this.reasons.join('\n') };
    this.rows += this.pending;
    this.emails = [];
    this.reasons = [];
    this.pending = 0;
    this.writing = this.writeBatch(batch).catch((error: unknown) => {
      this.failure ??= { error };
    });
  }
}

type ImportRow = { email: string; reason: SuppressionReason };

function headerColumns(header: string[]): { email: number; reason: number } {
  const names = header.map((h) => h.trim().toLowerCase());
  const email = names.indexOf('email');
  if (email < 0) throw invalidCsv('the first row must be a header naming an `email` column');
  return { email, reason: names.indexOf('reason') };
}

function importRow(record: string[], columns: { email: number; reason: number }): ImportRow | null {
  const email = (record[columns.email] ?? '').trim();
  if (email.length > MAX_EMAIL || !isPlainEmailAddress(email)) return null;
  const reasonText = columns.reason >= 0 ? (record[columns.reason] ?? '').trim().toUpperCase() : '';
  const reason = (reasonText || 'MANUAL') as SuppressionReason;
  if (!SUPPRESSION_REASONS.includes(reason)) return null;
  return { email, reason };
}

function invalidCsv(message: string): DomainError {
  return new DomainError(ErrorCode.ValidationError, message, { status: 422, details: [{ field: 'body', message, code: 'csv' }] });
}

function tooManyRows(): DomainError {
  const message = `an import holds at most ${MAX_IMPORT_ROWS} rows; split the file`;
  return new DomainError(ErrorCode.PayloadTooLarge, message, { status: 413 });
}
