import type { Sql } from './sql.service.js';

/** A case-insensitive substring pattern for `lower(column) LIKE`: `%`, `_` and `\` match themselves. */
export function likeSubstring(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The WHERE of a list: conditions joined by AND, each `?` standing for the value given with it. */
export class ListFilter {
  readonly params: unknown[] = [];
  readonly conditions: string[] = [];

  where(condition: string, value: unknown): this {
    this.params.push(value);
    this.conditions.push(condition.replaceAll('?', `$${this.params.length}`));
    return this;
  }

  /** A condition over parameters already given (e.g. the project id of a joined table again). */
  raw(condition: string): this {
    this.conditions.push(condition);
    return this;
  }
}

export interface KeysetPageQuery {
  select: string;
  from: string;
  /** The keyset column (UUIDv7 ids: newest first by creation). */
  idColumn: string;
  filter: ListFilter;
  /** Only rows older than this id (the cursor of the previous page). */
  beforeId?: string;
  limit: number;
}

/**
 * One page of a list (limit + 1 rows, newest first: the extra row tells whether there is more) and
 * the total matching the filter, queried side by side. Every mail list endpoint pages this way.
 */
export async function keysetPage<T>(sql: Sql, q: KeysetPageQuery): Promise<{ rows: T[]; total: number }> {
  const page = new ListFilter();
  page.params.push(...q.filter.params);
  page.conditions.push(...q.filter.conditions);
  if (q.beforeId) page.where(`${q.idColumn} < ?`, q.beforeId);
  page.params.push(q.limit + 1);
  const [rows, [{ total }]] = await Promise.all([
    sql.query<T>(
      `SELECT ${q.select} FROM ${q.from} WHERE ${page.conditions.join(' AND ')} ORDER BY ${q.idColumn} DESC LIMIT $${page.params.length}`,
      page.params,
    ),
    sql.query<{ total: number }>(`SELECT count(*)::int AS total FROM ${q.from} WHERE ${q.filter.conditions.join(' AND ')}`, q.filter.params),
  ]);
  return { rows, total };
}
