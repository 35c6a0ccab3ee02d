import { DEFAULT_PAGE_SIZE, type DirectoryListQueryDto, type Paged } from './directory.dto.js';

export function pageOf(query: DirectoryListQueryDto): { page: number; pageSize: number; offset: number } {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export function paged<T>(items: T[], total: number, page: number, pageSize: number): Paged<T> {
  return { items, total, totalPages: Math.max(1, Math.ceil(total / pageSize)), page, pageSize };
}
