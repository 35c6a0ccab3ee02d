/**
 * The vocabulary of segment conditions (decisions.md "Segments"): types, the fields a filter may
 * name, which operators each field takes, and the size limits. Framework-free: campaigns
 * (`audienceFilter`) and workflows (`CONDITION` steps) use it too.
 */

export type SegmentOperator =
  | 'equals'
  | 'notEquals'
  | 'contains'
  | 'notContains'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'exists'
  | 'notExists'
  | 'within'
  | 'olderThan'
  | 'triggered'
  | 'notTriggered'
  | 'triggeredWithin'
  | 'received'
  | 'opened'
  | 'clicked'
  | 'notOpened'
  | 'notClicked';

export type SegmentUnit = 'minutes' | 'hours' | 'days';

export interface SegmentFilter {
  field: string;
  operator: SegmentOperator;
  value?: unknown;
  unit?: SegmentUnit;
}

export interface SegmentCondition {
  logic: 'AND' | 'OR';
  groups: { filters: SegmentFilter[] }[];
}

export interface SegmentFieldError {
  field: string;
  message: string;
  code: string;
}

export const SEGMENT_OPERATORS: readonly SegmentOperator[] = [
  'equals',
  'notEquals',
  'contains',
  'notContains',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'notExists',
  'within',
  'olderThan',
  'triggered',
  'notTriggered',
  'triggeredWithin',
  'received',
  'opened',
  'clicked',
  'notOpened',
  'notClicked',
];
export const SEGMENT_UNITS: readonly SegmentUnit[] = ['minutes', 'hours', 'days'];
export const SEGMENT_LOGICS: readonly SegmentCondition['logic'][] = ['AND', 'OR'];

/** Size bounds: a crafted body cannot make a giant statement (at most 400 predicates). */
export const MAX_SEGMENT_GROUPS = 20;
export const MAX_SEGMENT_FILTERS_PER_GROUP = 20;
export const MAX_SEGMENT_STRING_LENGTH = 1000;
/** Contact data keys are 1 to 128 characters (contacts' rule), event names too (events' rule). */
export const MAX_SEGMENT_DATA_KEY_LENGTH = 128;
export const MAX_SEGMENT_EVENT_NAME_LENGTH = 128;
/** `within` / `olderThan` / `triggeredWithin` amounts: positive, at most this many units. */
export const MAX_SEGMENT_AMOUNT = 1_000_000;

/** What a filter's `field` names. */
export type SegmentField =
  | { kind: 'email' }
  | { kind: 'subscribed' }
  | { kind: 'createdAt' }
  | { kind: 'data'; key: string }
  | { kind: 'event'; name: string }
  | { kind: 'campaign'; campaignId: string };

/** The campaign operators (decisions.md "Engagement analytics"): a person's opens and clicks only. */
export const CAMPAIGN_OPERATORS: readonly SegmentOperator[] = ['received', 'opened', 'clicked', 'notOpened', 'notClicked'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type SegmentFieldKind = SegmentField['kind'];

/** Which operators make sense on which field; every other pair is a 422. */
export const OPERATORS_BY_FIELD: Record<SegmentFieldKind, readonly SegmentOperator[]> = {
  email: ['equals', 'notEquals', 'contains', 'notContains'],
  subscribed: ['equals', 'notEquals'],
  createdAt: ['gt', 'gte', 'lt', 'lte', 'within', 'olderThan'],
  data: ['equals', 'notEquals', 'contains', 'notContains', 'gt', 'gte', 'lt', 'lte', 'exists', 'notExists', 'within', 'olderThan'],
  event: ['triggered', 'notTriggered', 'triggeredWithin'],
  campaign: CAMPAIGN_OPERATORS,
};

/** Operators whose `value` is an amount of `unit`s back from now. */
export const RELATIVE_TIME_OPERATORS: readonly SegmentOperator[] = ['within', 'olderThan', 'triggeredWithin'];
/** Operators that take no value. */
export const VALUELESS_OPERATORS: readonly SegmentOperator[] = ['exists', 'notExists', 'triggered', 'notTriggered', ...CAMPAIGN_OPERATORS];

/** Postgres text and jsonb hold neither U+0000 nor unpaired UTF-16 surrogates. */
// eslint-disable-next-line no-control-regex -- matching U+0000 is the point
const NOT_STORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorableText(value: string): boolean {
  return !NOT_STORABLE.test(value);
}

/**
 * `email`, `subscribed`, `createdAt`, `data.<key>` (any key contacts allow), `event.<name>`,
 * `campaign.<campaignId>` (a UUID, kept in lower case); else null.
 */
export function parseSegmentField(field: string): SegmentField | null {
  if (field === 'email' || field === 'subscribed' || field === 'createdAt') return { kind: field };
  if (field.startsWith('data.')) {
    const key = field.slice('data.'.length);
    return key.length >= 1 && key.length <= MAX_SEGMENT_DATA_KEY_LENGTH && isStorableText(key) ? { kind: 'data', key } : null;
  }
  if (field.startsWith('event.')) {
    const name = field.slice('event.'.length);
    return name.length >= 1 && name.length <= MAX_SEGMENT_EVENT_NAME_LENGTH && isStorableText(name) ? { kind: 'event', name } : null;
  }
  if (field.startsWith('campaign.')) {
    const campaignId = field.slice('campaign.'.length);
    return UUID.test(campaignId) ? { kind: 'campaign', campaignId: campaignId.toLowerCase() } : null;
  }
  return null;
}

/**
 * A valid ISO 8601 date or date-time, years 1000-9999: months, days per month (leap years included),
 * hours, minutes, seconds and offsets in range. Migration 1763900000000-Segments holds the same
 * pattern in `segment_text_to_timestamptz`, so stored values and filter values read alike; after it
 * matches, no cast can fail. Bounded alternations, no nested quantifiers: linear on any input.
 */
export const VALID_ISO_DATE =
  /^(?:[1-9]\d{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))|(?:[1-9]\d(?:0[48]|[2468][048]|[13579][26])|(?:1[26]|[2468][048]|[3579][26])00)-02-29)(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:0\d|1[0-5])(?::?[0-5]\d)?)?)?$/;
const ISO_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|([+-])(\d{2}):?(\d{2})?)?)?$/;

/**
 * An ISO 8601 date (`2025-01-31`) or date-time (`2025-01-31T10:00:00Z`, offset optional) as a UTC ISO
 * string; null for anything else, impossible dates included. Without an offset the time is UTC, as the
 * SQL function `segment_text_to_timestamptz` reads stored data values.
 */
export function parseSegmentDate(value: string): string | null {
  if (!VALID_ISO_DATE.test(value)) return null;
  const m = ISO_PARTS.exec(value) as RegExpExecArray;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((part) => Number(part ?? 0));
  const millis = Math.floor(Number(m[7] ?? 0) * 1000);
  const offsetMinutes = m[9] ? (m[9] === '+' ? 1 : -1) * (Number(m[10]) * 60 + Number(m[11] ?? 0)) : 0;
  const instant = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000);
  // An offset can push 9999-12-31 past year 9999, which toISOString writes as +010000 (not ISO 8601 text).
  return instant.getUTCFullYear() <= 9999 ? instant.toISOString() : null;
}
