/** Numbered parameters and the WHERE conditions that use them, for queries whose filters are optional. */
export class SqlWhere {
  readonly params: unknown[] = [];
  readonly conditions: string[] = [];

  /** Adds a parameter; returns its placeholder (`$3`). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** Every `?` in `condition` stands for this one parameter. */
  add(condition: string, value: unknown): this {
    const ref = this.param(value);
    this.conditions.push(condition.replaceAll('?', ref));
    return this;
  }

  /** A condition over parameters already added (or none). */
  raw(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  sql(): string {
    return this.conditions.join(' AND ');
  }

  /** `WHERE <conditions>`, or nothing when there are none. */
  whereClause(): string {
    return this.conditions.length > 0 ? `WHERE ${this.sql()}` : '';
  }

  /** The same conditions and parameters, to extend without touching this one. */
  copy(): SqlWhere {
    const copy = new SqlWhere();
    copy.params.push(...this.params);
    copy.conditions.push(...this.conditions);
    return copy;
  }
}

/** A substring pattern for LIKE / ILIKE: `%`, `_` and `\` in `search` match themselves. */
export function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
