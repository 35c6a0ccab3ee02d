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
  /**
   * The total from elsewhere than a count of the rows the filter matches (e.g. a maintained
   * per-project count): a scalar subquery, its parameters bound with `param`. Page and total then
   * come back in one statement (one round trip, one pooled connection).
   */
  totalFrom?: (param: (value: unknown) => string) => string;
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
  const pageSql = `SELECT ${q.select} FROM ${q.from} WHERE ${page.sql()} ORDER BY ${q.idColumn} DESC LIMIT ${limit}`;
  if (q.totalFrom)
    return pageWithTotal<T>(db, { pageSql, totalSql: q.totalFrom((value) => page.param(value)), page, idColumn: q.idColumn });
  const [rows, [{ total }]] = await Promise.all([
    queryPrepared<T>(db, pageSql, page.params),
    queryPrepared<{ total: number }>(db, `SELECT count(*)::int AS total FROM ${q.from} WHERE ${q.filter.sql()}`, q.filter.params),
  ]);
  return { rows, total };
}

/**
 * Page and total in one statement: at least one row (all page columns null when the page is empty).
 * The rows carry the `total` column too.
 */
async function pageWithTotal<T>(
  db: Db,
  q: { pageSql: string; totalSql: string; page: SqlWhere; idColumn: string },
): Promise<{ rows: T[]; total: number }> {
  const rows = await queryPrepared<Record<string, unknown> & { total: number }>(
    db,
    `SELECT p.*, (${q.totalSql}) AS total FROM (SELECT 1) AS one LEFT JOIN LATERAL (${q.pageSql}) AS p ON true`,
    q.page.params,
  );
  const total = rows[0]?.total ?? 0;
  // Each row keeps its `total` column: a page's rows are mapped to the response shape by their
  // service (contacts: toContact picks its fields), and a copy of every row without it (`{ total,
  // ...row }`, a slow-path rest copy) cost more than the rest of the page's own code (issue #34 profile).
  const page = rows.filter((row) => row[q.idColumn] !== null) as unknown as T[];
  return { rows: page, total };
}
