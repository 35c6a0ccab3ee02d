import { Logger } from '@nestjs/common';
import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { ActionLogExportRow } from './audit-logs.repository.js';

/** decisions.md "Audit and action logs": the export's columns, in order. */
export const ACTION_LOG_CSV_COLUMNS = ['When', 'User', 'Action', 'Resource', 'Field', 'Old value', 'New value', 'Source'];

const logger = new Logger('ActionLogCsv');

/** Strings as they are; anything else (numbers, booleans, arrays, objects, null) as JSON. */
export function csvValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

/** First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A cell a spreadsheet shows as text: one that starts like a formula gets a leading single quote, so
 * a role name or a user name such as `=HYPERLINK(...)` is never evaluated when the export is opened.
 */
export function csvCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/**
 * The CSV rows of one entry: one per changed field, or a single row with empty Field and values
 * when the entry changed nothing. Resource is `kind:id`; User the actor's name, else email, else id.
 */
export function csvRowsOf(entry: ActionLogExportRow): string[][] {
  const common = {
    when: new Date(entry.created_at).toISOString(),
    user: entry.actor_name ?? entry.actor_user_id ?? '',
    action: entry.action_label ?? entry.command_id,
    resource: [entry.resource_kind, entry.resource_id].filter((p) => p !== null && p !== '').join(':'),
  };
  const row = (field: string, from: string, to: string) =>
    [common.when, common.user, common.action, common.resource, field, from, to, entry.source].map(csvCell);
  const changes = Object.entries(entry.changes ?? {});
  if (changes.length === 0) return [row('', '', '')];
  return changes.map(([field, change]) => row(field, csvValue(change?.from), csvValue(change?.to)));
}

/**
 * A CSV stream (header row first, RFC 4180 quoting by csv-stringify) over entries loaded batch by
 * batch as the client reads, so the export never holds the whole file in memory.
 */
export function actionLogCsvStream(batches: () => AsyncGenerator<ActionLogExportRow[]>): Readable {
  async function* records() {
    for await (const batch of batches()) {
      for (const entry of batch) yield* csvRowsOf(entry);
    }
  }
  const csv = stringify({ header: true, columns: ACTION_LOG_CSV_COLUMNS, record_delimiter: 'windows' });
  return pipeline(Readable.from(records()), csv, (err) => {
    if (err && err.name !== 'AbortError' && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      logger.error({ err }, 'action log export failed mid-stream');
    }
  });
}
