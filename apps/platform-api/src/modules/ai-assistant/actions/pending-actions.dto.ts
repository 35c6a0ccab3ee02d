import { type PipeTransform } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { IsOptional, IsString, MaxLength, validate } from 'class-validator';
import { ErrorCode } from '@app/contracts';
import { DomainError, flattenValidationErrors } from '@app/service-kit';
import { PENDING_ACTION_STATUSES, type PendingActionStatus } from './pending-actions.repository.js';

export const CANCEL_REASON_MAX_LENGTH = 500;

// ---- requests ---------------------------------------------------------------------------------

export class CancelPendingActionDto {
  @ApiPropertyOptional({ maxLength: CANCEL_REASON_MAX_LENGTH, description: 'Why the user cancelled (kept with the action, not returned).' })
  @IsOptional()
  @IsString()
  @MaxLength(CANCEL_REASON_MAX_LENGTH)
  reason?: string;
}

/**
 * A body validated with unknown fields REJECTED (400), not stripped as the global pipe does: for
 * bodies the spec closes (the cancel body). Declare the parameter as `unknown`, so the global pipe
 * leaves it alone. A missing body is an empty one.
 */
export class StrictBodyPipe<T extends object> implements PipeTransform<unknown, Promise<T>> {
  constructor(private readonly type: new () => T) {}

  async transform(value: unknown): Promise<T> {
    const body = value ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw DomainError.badRequest('validation failed: the body must be a JSON object');
    const instance = plainToInstance(this.type, body);
    const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length === 0) return instance;
    const details = flattenValidationErrors(errors);
    throw new DomainError(ErrorCode.ValidationError, `validation failed: ${details[0].field} ${details[0].message}`, {
      status: 400,
      details,
    });
  }
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class PendingActionDto {
  @ApiProperty({ format: 'uuid', description: 'Also the `pendingActionId` of the chat’s `data-mutation-preview` part.' }) id: string;
  @ApiProperty({ example: 'auth.access_assistant' }) agentId: string;
  @ApiProperty({ example: 'auth.rename_role' }) toolName: string;
  @ApiProperty({
    enum: PENDING_ACTION_STATUSES,
    description: 'A pending action past `expiresAt` is answered `expired` (the expiry job marks it so within a minute).',
  })
  status: PendingActionStatus;
  @ApiProperty({ type: String, nullable: true, example: 'auth.role' }) targetEntityType: string | null;
  @ApiProperty({ type: String, nullable: true }) targetRecordId: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', properties: { from: {}, to: {} } },
    description: 'Field -> {from (at preview time), to (what the action sets)}.',
    example: { name: { from: 'Editors', to: 'Content editors' } },
  })
  fieldDiff: Record<string, { from: unknown; to: unknown }>;
  @ApiProperty({ type: Number, nullable: true, description: 'The record’s version at preview time (roles: updated_at in epoch ms).' })
  recordVersion: number | null;
  @ApiProperty({ type: [String] }) attachmentIds: string[];
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: 'After confirm: the tool’s result (`confirmed`), or `{error: {code, message}}` (`failed`).',
  })
  executionResult: Record<string, unknown> | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() expiresAt: string;
  @ApiProperty({ type: String, nullable: true }) resolvedAt: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) resolvedByUserId: string | null;
}

export class ConfirmResultDto {
  @ApiProperty({ description: 'true when the tool ran (now or by an earlier confirm); false when it failed.' }) ok: boolean;
  @ApiProperty({ type: PendingActionDto }) pendingAction: PendingActionDto;
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, description: 'The stored `executionResult`.' })
  mutationResult: Record<string, unknown> | null;
}
