import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

const EVENT_CATEGORIES = ['crud', 'lifecycle', 'system'] as const;

/** 'true' / 'false' (query strings) to booleans; anything else stays as is and fails validation. */
const booleanString = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

export class ListEventsQuery {
  @ApiPropertyOptional({ enum: EVENT_CATEGORIES }) @IsOptional() @IsIn(EVENT_CATEGORIES) category?: string;
  @ApiPropertyOptional({ maxLength: 100, example: 'auth' }) @IsOptional() @IsString() @MaxLength(100) module?: string;
  @ApiPropertyOptional({ type: Boolean, default: true, description: 'Leave out events not offered as automation triggers.' })
  @IsOptional()
  @Transform(booleanString)
  @IsBoolean({ message: 'excludeTriggerExcluded must be true or false' })
  excludeTriggerExcluded?: boolean;
}

export class StreamEventsQuery {
  @ApiPropertyOptional({
    maxLength: 64,
    example: '1764230400000-0',
    description: 'As the Last-Event-ID header, for clients that cannot set it.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  lastEventId?: string;
}

export class DeclaredEventDto {
  @ApiProperty({ example: 'auth.login.success' }) id: string;
  @ApiProperty() label: string;
  @ApiProperty({ enum: EVENT_CATEGORIES }) category: string;
  @ApiProperty() module: string;
  @ApiProperty() excludeFromTriggers: boolean;
  @ApiProperty({ description: 'Delivered to browsers through GET /events/stream.' }) clientBroadcast: boolean;
}

export class DeclaredEventListDto {
  @ApiProperty({ type: [DeclaredEventDto] }) data: DeclaredEventDto[];
  @ApiProperty({ type: 'integer' }) total: number;
}
