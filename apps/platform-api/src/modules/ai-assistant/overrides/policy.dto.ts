import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Validate,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { MUTATION_POLICIES, type MutationPolicy } from '../agents/agent-definition.js';
import { AGENT_ID_PATTERN } from '../agents/agent-registry.js';

export const NOTES_MAX_LENGTH = 2000;
export const PROMPT_SECTIONS_MAX = 50;
export const PROMPT_SECTION_ID_MAX_LENGTH = 64;
export const PROMPT_SECTION_TEXT_MAX_LENGTH = 20_000;
const SECTION_ID = /^[A-Za-z][A-Za-z0-9_.-]*$/;

// ---- requests ---------------------------------------------------------------------------------

export class AgentIdParams {
  @ApiProperty({ description: '`module.agent`, e.g. `auth.access_assistant`.', example: 'auth.access_assistant' })
  @Matches(AGENT_ID_PATTERN, { message: 'agentId must be module.agent (lower-case letters, digits and _)' })
  agentId: string;
}

export class SaveMutationPolicyDto {
  @ApiProperty({ enum: MUTATION_POLICIES, description: 'Must be as restrictive as the code-declared policy, or more.' })
  @IsIn(MUTATION_POLICIES)
  mutationPolicy: MutationPolicy;

  @ApiPropertyOptional({ maxLength: NOTES_MAX_LENGTH, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(NOTES_MAX_LENGTH)
  notes?: string | null;
}

/** `sections`: at most 50 entries, ids `[A-Za-z][A-Za-z0-9_.-]*` up to 64 characters, texts up to 20,000. */
@ValidatorConstraint({ name: 'promptSections' })
export class PromptSectionsConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > PROMPT_SECTIONS_MAX) return false;
    return entries.every(
      ([key, text]) =>
        key.length <= PROMPT_SECTION_ID_MAX_LENGTH &&
        SECTION_ID.test(key) &&
        typeof text === 'string' &&
        text.length <= PROMPT_SECTION_TEXT_MAX_LENGTH,
    );
  }

  defaultMessage(): string {
    return (
      `sections must map at most ${PROMPT_SECTIONS_MAX} section ids (a letter, then letters, digits, _ . -; ` +
      `at most ${PROMPT_SECTION_ID_MAX_LENGTH} characters) to texts of at most ${PROMPT_SECTION_TEXT_MAX_LENGTH} characters`
    );
  }
}

export class SavePromptOverrideDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'Section id -> text; replaces those sections of the agent’s prompt. Reserved policy keys (`mutationPolicy`, ' +
      '`readOnly`, `allowedTools`, `acceptedMediaTypes`) are 400 `reserved_key`.',
    example: { style: 'Answer in formal English.' },
  })
  @IsObject()
  @Validate(PromptSectionsConstraint)
  sections: Record<string, string>;

  @ApiPropertyOptional({ maxLength: NOTES_MAX_LENGTH, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(NOTES_MAX_LENGTH)
  notes?: string | null;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class MutationPolicyOverrideDto {
  @ApiProperty() agentId: string;
  @ApiProperty({ enum: MUTATION_POLICIES }) mutationPolicy: MutationPolicy;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) updatedByUserId: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class MutationPolicyViewDto {
  @ApiProperty() agentId: string;
  @ApiProperty({ enum: MUTATION_POLICIES }) codeDeclared: MutationPolicy;
  @ApiProperty({ type: MutationPolicyOverrideDto, nullable: true }) override: MutationPolicyOverrideDto | null;
}

export class MutationPolicySavedDto extends MutationPolicyViewDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
}

export class MutationPolicyClearedDto extends MutationPolicySavedDto {
  @ApiProperty({ description: 'false when there was no override (idempotent).' }) cleared: boolean;
}

export class PromptOverrideVersionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() agentId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null: the tenant-wide override' }) organizationId:
    string | null;
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) sections: Record<string, string>;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) createdByUserId: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty({ description: 'Versions are immutable: the time it was saved.' }) updatedAt: string;
}

export class PromptOverrideViewDto {
  @ApiProperty() agentId: string;
  @ApiProperty({ type: PromptOverrideVersionDto, nullable: true, description: 'The newest version; null when none.' })
  override: PromptOverrideVersionDto | null;
  @ApiProperty({ type: [PromptOverrideVersionDto], description: 'Newest first, at most 10.' }) versions: PromptOverrideVersionDto[];
}

export class PromptOverrideSavedDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty() updatedAt: string;
}
