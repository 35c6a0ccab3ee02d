import { DEFAULT_PAGE_SIZE, type DirectoryListQueryDto, type Paged } from './directory.dto.js';
import { likePattern } from '@app/service-kit';

/** WHERE clauses and their parameters, numbered as they are added. */
export class SqlFilter {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Every `?` in `clause` stands for this one parameter. */
  add(clause: string, value: unknown): this {
    this.params.push(value);
    this.clauses.push(clause.replaceAll('?', `$${this.params.length}`));
    return this;
  }

  where(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

/** A search term as an ILIKE pattern matching it literally anywhere. */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function pageOf(query: DirectoryListQueryDto): { page: number; pageSize: number; offset: number } {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export function paged<T>(items: T[], total: number, page: number, pageSize: number): Paged<T> {
  return { items, total, totalPages: Math.max(1, Math.ceil(total / pageSize)), page, pageSize };
}
