import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, registerDecorator, isUUID } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/**
 * Cursors are opaque to clients (base64url of the last row's sort key), so the order behind them can
 * change without breaking anyone who just passes them back.
 */
export function encodeCursor(sortKey: string): string {
  return Buffer.from(sortKey, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  return Buffer.from(cursor, 'base64url').toString('utf8');
}

/** A cursor made by `encodeCursor(id)` for a keyset by id; anything else is a 422. */
function IsIdCursor(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isCursor',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isUUID(decodeCursor(value)),
        defaultMessage: () => 'cursor is not a cursor this list returned',
      },
    });
}

/** `limit` (default 20, 1 to 100) for every list. */
export class PageLimitQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit: number = DEFAULT_PAGE_SIZE;
}

/** `limit` and a keyset `cursor` over ids (newest first). */
export class IdPageQuery extends PageLimitQuery {
  @ApiPropertyOptional({ description: 'The `cursor` / `nextCursor` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @IsIdCursor()
  cursor?: string;
}

/** Splits `limit + 1` fetched rows into the page and whether more follow. */
export function takePage<T>(rows: T[], limit: number): { page: T[]; hasMore: boolean } {
  return rows.length > limit ? { page: rows.slice(0, limit), hasMore: true } : { page: rows, hasMore: false };
}

/** `true`/`false` query strings become booleans; anything else stays a string and fails `@IsBoolean`. */
export function toBooleanQuery({ value }: { value: unknown }): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/** Trims strings; leaves other values for the validators to judge. */
export function trimString({ value }: { value: unknown }): unknown {
  return typeof value === 'string' ? value.trim() : value;
}
