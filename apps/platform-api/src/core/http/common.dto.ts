import { ApiProperty } from '@nestjs/swagger';

/** Response shapes many endpoints share, for the OpenAPI document. */
export class CreatedIdDto {
  @ApiProperty({ format: 'uuid' }) id: string;
}

export class OkDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
}

/** The platform's error body (platform-api.md "Errors"). */
export class ErrorDto {
  @ApiProperty() error: string;
}

/** class-transformer hook: trims strings, leaves anything else for the validators to reject. */
export const trimString = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
