import { queryPrepared, type Db, type SqlWhere } from '@app/service-kit';

export interface KeysetPageQuery {
  select: string;
  from: string;
  /** The keyset column (UUIDv7 ids: newest first by creation). */
  idColumn: string;
  filter: SqlWhere;
  /** Only rows older than this id (the cursor of the previous page). */
  beforeId?: string;
  limit: number;
}

/**
 * One page of a list (limit + 1 rows, newest first: the extra row tells whether there is more) and
 * the total matching the filter, queried side by side. Every mail list endpoint pages this way, for
 * its repository. Named prepared statements (the contact pages are a hot path): the texts come from
 * fixed pieces and the set of filters present, a bounded set.
 */
export async function keysetPage<T>(db: Db, q: KeysetPageQuery): Promise<{ rows: T[]; total: number }> {
  const page = q.filter.copy();
  if (q.beforeId) page.add(`${q.idColumn} < ?`, q.beforeId);
  const limit = page.param(q.limit + 1);
  const [rows, [{ total }]] = await Promise.all([
    queryPrepared<T>(db, `SELECT ${q.select} FROM ${q.from} WHERE ${page.sql()} ORDER BY ${q.idColumn} DESC LIMIT ${limit}`, page.params),
    queryPrepared<{ total: number }>(db, `SELECT count(*)::int AS total FROM ${q.from} WHERE ${q.filter.sql()}`, q.filter.params),
  ]);
  return { rows, total };
}
