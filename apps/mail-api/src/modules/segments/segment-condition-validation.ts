import {
  isStorableText,
  MAX_SEGMENT_AMOUNT,
  MAX_SEGMENT_FILTERS_PER_GROUP,
  MAX_SEGMENT_GROUPS,
  MAX_SEGMENT_STRING_LENGTH,
  OPERATORS_BY_FIELD,
  parseSegmentDate,
  parseSegmentField,
  RELATIVE_TIME_OPERATORS,
  SEGMENT_LOGICS,
  SEGMENT_OPERATORS,
  SEGMENT_UNITS,
  VALUELESS_OPERATORS,
  type SegmentField,
  type SegmentFieldError,
  type SegmentOperator,
} from './segment-fields.js';

/** A condition with hundreds of problems answers the first ones: enough to fix it, bounded in size. */
const MAX_ERRORS = 20;

const CONDITION_KEYS = new Set(['logic', 'groups']);
const GROUP_KEYS = new Set(['filters']);
const FILTER_KEYS = new Set(['field', 'operator', 'value', 'unit']);

type Errors = SegmentFieldError[];

function at(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Unknown properties are refused (not stripped): a misspelt key would silently change the audience. */
function unknownKeys(input: Record<string, unknown>, allowed: Set<string>, path: string, errors: Errors): void {
  for (const key of Object.keys(input)) {
    if (allowed.has(key)) continue;
    const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
    errors.push({ field: at(path, shown), message: `property ${shown} should not exist`, code: 'whitelistValidation' });
  }
}

/**
 * Field errors of a whole condition `{logic, groups: [{filters: [...]}]}`, paths under `path`
 * (`condition.groups[0].filters[1].operator`); empty when it is valid. At most 20 groups of at most 20
 * filters.
 */
export function validateCondition(input: unknown, path: string): SegmentFieldError[] {
  const errors: Errors = [];
  if (!isPlainObject(input)) {
    return [{ field: path, message: `${path || 'condition'} must be an object {logic, groups}`, code: 'isObject' }];
  }
  unknownKeys(input, CONDITION_KEYS, path, errors);
  if (!SEGMENT_LOGICS.includes(input.logic as 'AND')) {
    errors.push({ field: at(path, 'logic'), message: 'logic must be one of: AND, OR', code: 'isIn' });
  }
  const groups = input.groups;
  const groupsPath = at(path, 'groups');
  if (!Array.isArray(groups) || groups.length === 0) {
    errors.push({ field: groupsPath, message: 'groups must be a non-empty array of {filters}', code: 'arrayMinSize' });
  } else if (groups.length > MAX_SEGMENT_GROUPS) {
    errors.push({ field: groupsPath, message: `groups must contain at most ${MAX_SEGMENT_GROUPS} groups`, code: 'arrayMaxSize' });
  } else {
    groups.forEach((group, index) => validateGroup(group, `${groupsPath}[${index}]`, errors));
  }
  return errors.slice(0, MAX_ERRORS);
}

function validateGroup(group: unknown, path: string, errors: Errors): void {
  if (errors.length >= MAX_ERRORS) return;
  if (!isPlainObject(group)) {
    errors.push({ field: path, message: 'each group must be an object {filters}', code: 'isObject' });
    return;
  }
  unknownKeys(group, GROUP_KEYS, path, errors);
  const filters = group.filters;
  const filtersPath = at(path, 'filters');
  if (!Array.isArray(filters) || filters.length === 0) {
    errors.push({ field: filtersPath, message: 'filters must be a non-empty array', code: 'arrayMinSize' });
  } else if (filters.length > MAX_SEGMENT_FILTERS_PER_GROUP) {
    errors.push({
      field: filtersPath,
      message: `a group must contain at most ${MAX_SEGMENT_FILTERS_PER_GROUP} filters`,
      code: 'arrayMaxSize',
    });
  } else {
    for (let index = 0; index < filters.length && errors.length < MAX_ERRORS; index += 1) {
      errors.push(...validateFilter(filters[index], `${filtersPath}[${index}]`));
    }
  }
}

/** Field errors of one filter `{field, operator, value?, unit?}` (a workflow CONDITION step's config too). */
export function validateFilter(input: unknown, path: string): SegmentFieldError[] {
  const errors: Errors = [];
  if (!isPlainObject(input)) {
    return [{ field: path, message: 'a filter must be an object {field, operator, value?, unit?}', code: 'isObject' }];
  }
  unknownKeys(input, FILTER_KEYS, path, errors);
  const field = typeof input.field === 'string' && input.field.length <= MAX_SEGMENT_STRING_LENGTH ? parseSegmentField(input.field) : null;
  if (!field) {
    errors.push({
      field: at(path, 'field'),
      message: 'field must be email, subscribed, createdAt, data.<key> (key 1 to 128 characters), event.<name> or campaign.<campaignId>',
      code: 'isSegmentField',
    });
  }
  const operator = input.operator as SegmentOperator;
  if (!SEGMENT_OPERATORS.includes(operator)) {
    errors.push({
      field: at(path, 'operator'),
      message: `operator must be one of: ${SEGMENT_OPERATORS.join(', ')}`,
      code: 'isSegmentOperator',
    });
    return errors;
  }
  if (!field) return errors;
  if (!OPERATORS_BY_FIELD[field.kind].includes(operator)) {
    errors.push({
      field: at(path, 'operator'),
      message: `operator ${operator} does not apply to ${describeField(field)}; use one of: ${OPERATORS_BY_FIELD[field.kind].join(', ')}`,
      code: 'operatorNotAllowedForField',
    });
    return errors;
  }
  const valueProblem = valueProblemOf(field, operator, input.value);
  if (valueProblem) errors.push({ field: at(path, 'value'), message: valueProblem, code: 'isSegmentValue' });
  errors.push(...unitErrors(operator, input.unit, path));
  return errors;
}

function describeField(field: SegmentField): string {
  if (field.kind === 'data') return 'data fields';
  if (field.kind === 'event') return 'event fields';
  if (field.kind === 'campaign') return 'campaign fields';
  return field.kind;
}

function unitErrors(operator: SegmentOperator, unit: unknown, path: string): Errors {
  const takesUnit = RELATIVE_TIME_OPERATORS.includes(operator);
  if (takesUnit && !SEGMENT_UNITS.includes(unit as 'days')) {
    return [{ field: at(path, 'unit'), message: `unit must be one of: ${SEGMENT_UNITS.join(', ')}`, code: 'isSegmentUnit' }];
  }
  if (!takesUnit && unit !== undefined && unit !== null) {
    return [
      { field: at(path, 'unit'), message: `unit is only allowed with ${RELATIVE_TIME_OPERATORS.join(', ')}`, code: 'unitNotAllowed' },
    ];
  }
  return [];
}

function stringProblem(value: unknown, what: string): string | null {
  if (typeof value !== 'string' || value.length === 0) return `value must be a non-empty string (${what})`;
  if (value.length > MAX_SEGMENT_STRING_LENGTH) return `value must be at most ${MAX_SEGMENT_STRING_LENGTH} characters`;
  if (!isStorableText(value)) return 'value must not contain NUL characters or unpaired surrogates';
  return null;
}

/** The problem of `value` for this field and operator, or null. Operators are already known to fit the field. */
function valueProblemOf(field: SegmentField, operator: SegmentOperator, value: unknown): string | null {
  if (VALUELESS_OPERATORS.includes(operator)) {
    return value === undefined || value === null ? null : `${operator} takes no value`;
  }
  if (RELATIVE_TIME_OPERATORS.includes(operator)) {
    const ok = typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_SEGMENT_AMOUNT;
    return ok ? null : `value must be a number of units greater than 0 and at most ${MAX_SEGMENT_AMOUNT}`;
  }
  if (field.kind === 'subscribed') return typeof value === 'boolean' ? null : 'value must be a boolean';
  if (field.kind === 'email') return stringProblem(value, 'an email address or part of one');
  if (field.kind === 'createdAt') {
    return typeof value === 'string' && parseSegmentDate(value) ? null : 'value must be an ISO 8601 date or date-time';
  }
  // data.<key>
  if (operator === 'contains' || operator === 'notContains') return stringProblem(value, 'the text to look for');
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'value must be a finite number';
  if (typeof value === 'boolean') {
    return operator === 'equals' || operator === 'notEquals' ? null : `value of ${operator} must be a number, a date or a string`;
  }
  return stringProblem(value, 'a string, number or boolean');
}
