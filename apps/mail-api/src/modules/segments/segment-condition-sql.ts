import { validateCondition, validateFilter } from './segment-condition-validation.js';
import {
  parseSegmentDate,
  parseSegmentField,
  type SegmentCondition,
  type SegmentField,
  type SegmentFilter,
  type SegmentOperator,
  type SegmentUnit,
} from './segment-fields.js';

/**
 * Segment conditions as SQL boolean predicates over one contact row. Every value (data keys and
 * event names included) is a bound parameter; the SQL text is made only of fixed pieces chosen by the
 * validated field kind and operator, and the caller's alias. Indexes each piece is meant for
 * (migration 1763900000000-Segments): `lower(email)` (unique + trigram), `(project_id, created_at)`,
 * `contacts.data` GIN jsonb_path_ops for `@>`, events `(contact_id, name, created_at)` for per-contact
 * EXISTS probes and `(project_id, name, created_at, contact_id)` for semi-joins over many contacts.
 */

/** Aliases inside the EXISTS subqueries; a caller's contact alias must differ from both. */
const EVENT_ALIAS = 'segment_event';
const MEMBER_ALIAS = 'segment_member';
const EMAIL_ALIAS = 'segment_email';
const SQL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const COMPARISON: Partial<Record<SegmentOperator, string>> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function checkAlias(alias: string): void {
  if (!SQL_IDENTIFIER.test(alias) || alias === EVENT_ALIAS || alias === MEMBER_ALIAS || alias === EMAIL_ALIAS)
    throw new Error(`invalid contact alias ${JSON.stringify(alias)}`);
}

function bind(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** A LIKE pattern matching `text` anywhere: `%`, `_` and `\` in it match themselves (default escape `\`). */
function substringPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Fixed SQL per validated unit: the amount is a bound float8, never formatted into interval text. */
const UNIT_INTERVAL: Record<SegmentUnit, string> = {
  minutes: "interval '1 minute'",
  hours: "interval '1 hour'",
  days: "interval '1 day'",
};

/** `now()` minus `value` `unit`s. */
function ago(params: unknown[], value: unknown, unit: SegmentUnit | undefined): string {
  return `(now() - ${bind(params, Number(value))}::float8 * ${UNIT_INTERVAL[unit as SegmentUnit]})`;
}

function compileEmail(op: SegmentOperator, c: string, value: unknown, params: unknown[]): string {
  // lower(email) is what the unique and trigram indexes are built on.
  if (op === 'equals') return `lower(${c}.email) = lower(${bind(params, value)}::text)`;
  if (op === 'notEquals') return `lower(${c}.email) <> lower(${bind(params, value)}::text)`;
  const like = `lower(${c}.email) LIKE lower(${bind(params, substringPattern(String(value)))}::text)`;
  return op === 'contains' ? like : `NOT (${like})`;
}

function compileCreatedAt(filter: SegmentFilter, c: string, params: unknown[]): string {
  const { operator: op, value, unit } = filter;
  if (op === 'within') return `${c}.created_at >= ${ago(params, value, unit)}`;
  if (op === 'olderThan') return `${c}.created_at < ${ago(params, value, unit)}`;
  return `${c}.created_at ${COMPARISON[op]} ${bind(params, parseSegmentDate(String(value)))}::timestamptz`;
}

/**
 * `data.<key>`: equality through containment (`@>`, GIN-indexed), key existence with `?`; numbers compare numerically, 42 = 42.0);
 * ordering numerically for a number value, as instants for an ISO date value, as text otherwise; a value
 * of another JSON type (or a missing key) never satisfies an ordering. Negations (`notEquals`,
 * `notContains`, `notExists`) are the exact complements, so they include contacts without the key.
 */
function compileData(filter: SegmentFilter, key: string, c: string, params: unknown[]): string {
  const { operator: op, value, unit } = filter;
  if (op === 'equals' || op === 'notEquals') {
    const contains = `${c}.data @> ${bind(params, JSON.stringify({ [key]: value }))}::jsonb`;
    return op === 'equals' ? contains : `NOT (${contains})`;
  }
  if (op === 'exists' || op === 'notExists') {
    const exists = `${c}.data ? ${bind(params, key)}::text`;
    return op === 'exists' ? exists : `NOT (${exists})`;
  }
  const k = `${bind(params, key)}::text`;
  if (op === 'contains' || op === 'notContains') {
    const like = `coalesce(lower(${c}.data ->> ${k}) LIKE lower(${bind(params, substringPattern(String(value)))}::text), false)`;
    return op === 'contains' ? like : `NOT ${like}`;
  }
  if (op === 'within' || op === 'olderThan') {
    const cmp = op === 'within' ? '>=' : '<';
    return `coalesce(segment_text_to_timestamptz(${c}.data ->> ${k}) ${cmp} ${ago(params, value, unit)}, false)`;
  }
  const cmp = COMPARISON[op] as string;
  if (typeof value === 'number') {
    // CASE, not AND: Postgres may evaluate AND operands in any order, and the cast fails on non-numbers.
    return `CASE WHEN jsonb_typeof(${c}.data -> ${k}) = 'number' THEN (${c}.data -> ${k})::numeric ${cmp} ${bind(params, value)}::numeric ELSE false END`;
  }
  const date = parseSegmentDate(String(value));
  if (date) return `coalesce(segment_text_to_timestamptz(${c}.data ->> ${k}) ${cmp} ${bind(params, date)}::timestamptz, false)`;
  return `CASE WHEN jsonb_typeof(${c}.data -> ${k}) = 'string' THEN (${c}.data ->> ${k}) ${cmp} ${bind(params, value)}::text ELSE false END`;
}

/**
 * Optional. `projectParam`: the placeholder (`$1`) of the project id the caller already bound and
 * filters `alias.project_id` by. Event subqueries then name the project by it instead of by correlation,
 * which lets Postgres answer an EXISTS it cannot turn into a join (inside OR, NOT, `FILTER`) with one
 * index range of the project's events instead of a scan of every project's events of that name.
 */
export interface CompileOptions {
  projectParam?: string;
}

function projectReference(options: CompileOptions, c: string, params: unknown[]): string {
  const ref = options.projectParam;
  if (ref === undefined) return `${c}.project_id`;
  const n = /^\$([1-9]\d*)$/.exec(ref);
  if (!n || Number(n[1]) > params.length) throw new Error(`projectParam must name a bound parameter, got ${JSON.stringify(ref)}`);
  return `${ref}::uuid`;
}

/** `event.<name>`: EXISTS over the contact's events, probing events (contact_id, name, created_at). */
function compileEvent(filter: SegmentFilter, name: string, c: string, params: unknown[], options: CompileOptions): string {
  const e = EVENT_ALIAS;
  const project = projectReference(options, c, params);
  let sql = `SELECT 1 FROM events ${e} WHERE ${e}.contact_id = ${c}.id AND ${e}.project_id = ${project} AND ${e}.name = ${bind(params, name)}::text`;
  if (filter.operator === 'triggeredWithin') {
    sql += ` AND ${e}.created_at >= ${ago(params, filter.value, filter.unit)}`;
  }
  return filter.operator === 'notTriggered' ? `NOT EXISTS (${sql})` : `EXISTS (${sql})`;
}

/**
 * What each campaign operator asks of the contact's email of the campaign (one per recipient): received
 * = delivered (SENT); opened / clicked = a person's open / click (`opened_at`, `clicked_at`: machine
 * opens and clicks have columns of their own); notOpened / notClicked = received and not that.
 */
const CAMPAIGN_EMAIL_STATE: Record<string, string> = {
  received: `status = 'SENT'`,
  opened: `opened_at IS NOT NULL`,
  clicked: `clicked_at IS NOT NULL`,
  notOpened: `status = 'SENT' AND ${EMAIL_ALIAS}.opened_at IS NULL`,
  notClicked: `status = 'SENT' AND ${EMAIL_ALIAS}.clicked_at IS NULL`,
};

/**
 * `campaign.<id>`: EXISTS of the contact's email of that campaign in that state, probing the unique
 * (campaign_id, contact_id) index of `emails`. The project is matched too: another project's campaign
 * id selects nobody, exactly like an id of no campaign.
 */
function compileCampaign(filter: SegmentFilter, campaignId: string, c: string, params: unknown[], options: CompileOptions): string {
  const e = EMAIL_ALIAS;
  const project = projectReference(options, c, params);
  return (
    `EXISTS (SELECT 1 FROM emails ${e} WHERE ${e}.campaign_id = ${bind(params, campaignId)}::uuid AND ${e}.contact_id = ${c}.id ` +
    `AND ${e}.project_id = ${project} AND ${e}.${CAMPAIGN_EMAIL_STATE[filter.operator]})`
  );
}

function compileField(field: SegmentField, filter: SegmentFilter, c: string, params: unknown[], options: CompileOptions): string {
  switch (field.kind) {
    case 'email':
      return compileEmail(filter.operator, c, filter.value, params);
    case 'subscribed':
      return `${c}.subscribed ${filter.operator === 'equals' ? '=' : '<>'} ${bind(params, filter.value)}::boolean`;
    case 'createdAt':
      return compileCreatedAt(filter, c, params);
    case 'data':
      return compileData(filter, field.key, c, params);
    case 'event':
      return compileEvent(filter, field.name, c, params, options);
    case 'campaign':
      return compileCampaign(filter, field.campaignId, c, params, options);
  }
}

/**
 * One filter as a parameterised predicate over the contact row aliased `contactAlias`; its values are
 * pushed onto `params` and referenced as `$n` after the ones already there. Throws on a filter that
 * `validateFilter` refuses (callers validate first and answer 422).
 */
export function compileFilter(filter: SegmentFilter, contactAlias: string, params: unknown[], options: CompileOptions = {}): string {
  checkAlias(contactAlias);
  const problems = validateFilter(filter, 'filter');
  if (problems.length > 0) throw new Error(`invalid segment filter: ${problems[0].field} ${problems[0].message}`);
  return `(${compileField(parseSegmentField(filter.field) as SegmentField, filter, contactAlias, params, options)})`;
}

/** A whole condition: each group's filters ANDed, the groups joined by `logic`. */
export function compileCondition(
  condition: SegmentCondition,
  contactAlias: string,
  params: unknown[],
  options: CompileOptions = {},
): string {
  checkAlias(contactAlias);
  const problems = validateCondition(condition, 'condition');
  if (problems.length > 0) throw new Error(`invalid segment condition: ${problems[0].field} ${problems[0].message}`);
  const joiner = condition.logic === 'OR' ? ' OR ' : ' AND ';
  const groups = condition.groups.map(
    (group) => `(${group.filters.map((f) => compileFilter(f, contactAlias, params, options)).join(' AND ')})`,
  );
  return `(${groups.join(joiner)})`;
}

/**
 * Who is in a stored segment: DYNAMIC, the contacts matching its condition; STATIC, its rows in
 * segment_members (primary key (segment_id, contact_id) serves the probe).
 */
export function segmentAudiencePredicate(
  segment: { id: string; type: 'DYNAMIC' | 'STATIC'; condition: SegmentCondition | null },
  contactAlias: string,
  params: unknown[],
  options: CompileOptions = {},
): string {
  checkAlias(contactAlias);
  if (segment.type === 'DYNAMIC') {
    if (!segment.condition) throw new Error(`dynamic segment ${segment.id} has no condition`);
    return compileCondition(segment.condition, contactAlias, params, options);
  }
  const m = MEMBER_ALIAS;
  return `EXISTS (SELECT 1 FROM segment_members ${m} WHERE ${m}.segment_id = ${bind(params, segment.id)}::uuid AND ${m}.contact_id = ${contactAlias}.id)`;
}
