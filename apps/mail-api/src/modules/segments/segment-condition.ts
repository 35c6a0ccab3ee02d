/**
 * Segment conditions (decisions.md "Segments"), framework-free: the segments module, campaigns
 * (`audienceFilter`, `audienceType: SEGMENT`) and workflows (`CONDITION` steps) all validate and
 * compile them here.
 *
 * - `validateCondition(input, path)` / `validateFilter(input, path)`: `{field, message, code}` errors for
 *   a 422 `VALIDATION_ERROR`, paths under `path` (`condition.groups[0].filters[1].operator`).
 * - `compileCondition(condition, alias, params)` / `compileFilter(filter, alias, params)`: a SQL boolean
 *   predicate over the contact row `alias` (contacts: id, project_id, email, subscribed, data, created_at);
 *   values are pushed onto `params` as `$n` after those already there. The caller still filters
 *   `alias.project_id`. Example:
 *   `const params = [projectId]; const where = compileCondition(cond, 'c', params);`
 *   `SELECT count(*) FROM contacts c WHERE c.project_id = $1 AND ${where}`.
 * - `segmentAudiencePredicate(segment, alias, params)`: who is in a stored segment.
 * - Each compile function takes an optional last argument `{projectParam: '$1'}`: the placeholder of
 *   the project id already bound. Pass it: event filters under OR / NOT / FILTER then read one index
 *   range of the project's events instead of every project's events of that name.
 *
 * Fields and operators: `email` (equals, notEquals: case-insensitive; contains, notContains),
 * `subscribed` (equals, notEquals; boolean), `createdAt` (gt, gte, lt, lte: ISO date; within, olderThan:
 * value + unit), `data.<key>` (equals, notEquals: string/number/boolean; contains, notContains:
 * case-insensitive substring; gt, gte, lt, lte: numbers numerically, ISO dates as instants, other
 * strings as text; exists, notExists; within, olderThan on date values), `event.<name>` (triggered,
 * notTriggered; triggeredWithin: value + unit), `campaign.<campaignId>` (received, opened, clicked,
 * notOpened, notClicked: a person's opens and clicks only). Units: minutes, hours, days. Other pairs
 * are refused.
 */
export {
  MAX_SEGMENT_FILTERS_PER_GROUP,
  MAX_SEGMENT_GROUPS,
  MAX_SEGMENT_STRING_LENGTH,
  OPERATORS_BY_FIELD,
  SEGMENT_OPERATORS,
  SEGMENT_UNITS,
  type SegmentCondition,
  type SegmentFieldError,
  type SegmentFilter,
  type SegmentOperator,
  type SegmentUnit,
} from './segment-fields.js';
export { validateCondition, validateFilter } from './segment-condition-validation.js';
export { compileCondition, compileFilter, segmentAudiencePredicate, type CompileOptions } from './segment-condition-sql.js';
