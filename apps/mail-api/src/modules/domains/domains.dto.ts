import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional } from 'class-validator';
import type { MailDnsRecord, MailDomain, MailDomainStatus, MailList } from '@app/contracts';
import { IdPageQuery } from '../../core/http/pagination.js';
import { IsDomainName, normalizeDomainName } from './domain-name.js';

export const DOMAIN_STATUSES: MailDomainStatus[] = ['PENDING', 'VERIFIED', 'FAILED'];

export class CreateDomainBody {
  @ApiProperty({
    example: 'mail.example.com',
    maxLength: 253,
    description:
      'A DNS host name with at least two labels. Lower-cased, a trailing dot dropped, an internationalized name ' +
      'stored as punycode. IP addresses, single labels, labels over 63 characters and other characters than ' +
      'letters, digits and hyphens are a 422 `isDomainName`.',
  })
  @Transform(({ value }) => normalizeDomainName(value))
  @IsDomainName()
  domain: string;
}

export class ListDomainsQuery extends IdPageQuery {
  @ApiPropertyOptional({ enum: DOMAIN_STATUSES, description: 'Only domains in this status (`VERIFIED`: the ones you can send from).' })
  @IsOptional()
  @IsIn(DOMAIN_STATUSES)
  status?: MailDomainStatus;
}

export class DnsRecordResponse implements MailDnsRecord {
  @ApiProperty({ enum: ['TXT'] }) type: 'TXT';
  @ApiProperty({ description: 'Fully qualified, without a trailing dot.', example: '_mail-verification.example.com' }) name: string;
  @ApiProperty({
    description:
      'Unquoted. A DNS provider may split a long value (the DKIM key) into several strings; that is fine, they are ' +
      'joined when checked.',
  })
  value: string;
  @ApiPropertyOptional({ description: 'Whether the last check found this record with this value; absent before the first check.' })
  verified?: boolean;
}

export class DomainResponse implements MailDomain {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'example.com' }) domain: string;
  @ApiProperty({ enum: DOMAIN_STATUSES }) status: MailDomainStatus;
  @ApiProperty({ description: '`status` is VERIFIED: mail can be sent from addresses at this exact domain, DKIM-signed.' })
  verified: boolean;
  @ApiProperty({
    type: [DnsRecordResponse],
    description:
      'Publish both: the ownership token at `_mail-verification.<domain>` and the DKIM public key at ' +
      '`<selector>._domainkey.<domain>`. The private key never leaves the service.',
  })
  records: DnsRecordResponse[];
  @ApiProperty({ type: [String], description: 'One line per record the last check found missing or wrong, or could not look up.' })
  failureReasons: string[];
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastCheckedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Since when the domain is VERIFIED.' })
  verifiedAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class DomainListResponse implements MailList<MailDomain> {
  @ApiProperty({ type: [DomainResponse] }) items: DomainResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Domains matching the filter, over all pages.' }) total: number;
}
