import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import type { MailVerificationResult } from '@app/contracts';

export class VerifyBody {
  @ApiProperty({
    maxLength: 320,
    description: 'The address to check. Bad syntax is a finding (`valid: false`), not a request error.',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(320)
  email: string;
}

export class VerificationResultDto implements MailVerificationResult {
  @ApiProperty() email: string;
  @ApiProperty({ description: 'Syntax is valid, the domain exists (NS) and has MX records.' }) valid: boolean;
  @ApiProperty({ description: 'Disposable (throwaway) provider, from a bundled, maintained list.' }) isDisposable: boolean;
  @ApiProperty({ description: 'Alias / forwarding service (DuckDuckGo, Firefox Relay, SimpleLogin, addy.io, Apple, ...).' })
  isAlias: boolean;
  @ApiProperty({ description: 'The domain looks like a misspelling; see `suggestion`. Does not make `valid` false.' }) isTypo: boolean;
  @ApiProperty({ description: 'The local part carries a `+tag`.' }) isPlusAddressed: boolean;
  @ApiProperty({ description: 'Free / personal mailbox provider (Gmail, Outlook, ...).' }) isPersonalEmail: boolean;
  @ApiProperty({ description: 'The domain (or, for a host inside a zone, its parent) has NS records.' }) domainExists: boolean;
  @ApiProperty({ description: 'The domain has A or AAAA records.' }) hasWebsite: boolean;
  @ApiProperty({ description: 'The domain has MX records (a null MX does not count).' }) hasMxRecords: boolean;
  @ApiProperty({ type: [String], description: 'One sentence per negative finding; empty for a good address.' }) reasons: string[];
  @ApiPropertyOptional({ description: 'The corrected address, when `isTypo`.' }) suggestion?: string;
}

export class VerifyResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: VerificationResultDto }) data: VerificationResultDto;
}
