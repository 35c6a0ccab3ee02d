import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';

class FieldErrorDto {
  @ApiProperty() field: string;
  @ApiProperty() message: string;
  @ApiProperty({ example: 'isEmail' }) code: string;
}

class MailErrorDetailDto {
  @ApiProperty({ example: 'VALIDATION_ERROR' }) code: string;
  @ApiProperty() message: string;
  @ApiProperty({ example: 422 }) statusCode: number;
  @ApiProperty({ description: 'Equals the X-Request-Id response header.' }) requestId: string;
  @ApiPropertyOptional({ type: [FieldErrorDto] }) errors?: FieldErrorDto[];
  @ApiPropertyOptional() suggestion?: string;
}

export class MailErrorBodyDto {
  @ApiProperty({ enum: [false] }) success: false;
  @ApiProperty({ type: MailErrorDetailDto }) error: MailErrorDetailDto;
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ description: 'Repeats error.message.' }) message: string;
}

const DESCRIPTIONS: Record<number, string> = {
  401: '`UNAUTHORIZED` (no Authorization header) or `INVALID_API_KEY` (malformed or unknown key).',
  403: '`PROJECT_DISABLED`, or `SECRET_KEY_REQUIRED` for a public key on a secret-key route.',
  404: "`NOT_FOUND`: no such resource in the caller's project.",
  422: '`VALIDATION_ERROR` with `errors[]` of `{field, message, code}`.',
  429: '`RATE_LIMIT_EXCEEDED`; `Retry-After` says when to retry.',
};

/** Documents the error envelope for the given statuses (401, 403 and 429 apply to every keyed route). */
export function ApiMailErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  const all = [...new Set([401, 403, 429, ...statuses])].sort();
  return applyDecorators(...all.map((status) => ApiResponse({ status, description: DESCRIPTIONS[status], type: MailErrorBodyDto })));
}
