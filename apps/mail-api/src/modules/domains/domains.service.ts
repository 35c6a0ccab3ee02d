import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { MailErrorCode, type MailDomain, type MailList } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { DnsLookup } from '../../core/dns/dns-lookup.service.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { projectScope, scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { DkimKeyCipher } from './dkim-key-cipher.js';
import { domainOfAddress } from './domain-name.js';
import {
  checkDkim,
  checkOwnership,
  decideStatus,
  dkimRecordName,
  generateDkimKeys,
  newVerificationToken,
  ownershipRecordName,
} from './domain-records.js';
import type { ListDomainsQuery } from './domains.dto.js';
import { DomainsRepository, toDomain, type DomainRow } from './domains.repository.js';

/** What sending needs to sign as a VERIFIED domain of the project. */
export interface SenderDomain {
  id: string;
  domain: string;
  dkimSelector: string;
  /** PKCS#8 PEM. */
  dkimPrivateKey: string;
}

/** Names of the users listed in a DOMAIN_IN_USE message; the rest are counted out. */
const USERS_IN_MESSAGE = 5;

/**
 * Sending domains of the calling project: DKIM keys, the records to publish, verification (now, and
 * by the recheck job), and the sender check of the send path. Another project's domain is a 404.
 */
@Injectable()
export class DomainsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly domains: DomainsRepository,
    private readonly dns: DnsLookup,
    private readonly dkimKeys: DkimKeyCipher,
  ) {}

  async list(project: ProjectContext, query: ListDomainsQuery): Promise<MailList<MailDomain>> {
    const { rows, total } = await this.domains.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      status: query.status,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return { items: page.map(toDomain), nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }

  async get(project: ProjectContext, id: string): Promise<MailDomain> {
    return toDomain(await this.row(project, id));
  }

  /** `domain` is already normalized by the DTO (lower case, no trailing dot, A-label). */
  async create(project: ProjectContext, domain: string): Promise<MailDomain> {
    // Checked first so a duplicate does not cost a key generation; the unique index still decides races.
    const scope = scopeOf(project);
    if (await this.domains.exists(this.dataSource, scope, domain)) throw domainExists(domain);
    const keys = await generateDkimKeys();
    const row = await this.domains.insert(this.dataSource, scope, {
      domain,
      verificationToken: newVerificationToken(),
      dkimSelector: keys.selector,
      dkimPrivateKey: this.dkimKeys.seal(keys.privateKeyPem, { projectId: scope.projectId, domain }),
      dkimPublicKey: keys.publicKeyBase64,
    });
    if (!row) throw domainExists(domain);
    return toDomain(row);
  }

  async verify(project: ProjectContext, id: string): Promise<MailDomain> {
    const row = await this.check(await this.row(project, id));
    if (!row) throw domainNotFound();
    return toDomain(row);
  }

  /**
   * Looks both records up now (bypassing the DNS cache) and stores the outcome. Null when the domain
   * was deleted during the check. Idempotent: a repeated check stores what DNS says at that moment.
   */
  async check(row: DomainRow): Promise<DomainRow | null> {
    const names = { ownership: ownershipRecordName(row.domain), dkim: dkimRecordName(row.dkim_selector, row.domain) };
    const [ownership, dkim] = await Promise.all([
      this.dns.lookup('TXT', names.ownership, { fresh: true }),
      this.dns.lookup('TXT', names.dkim, { fresh: true }),
    ]);
    const result = decideStatus(row.status, checkOwnership(ownership, row.verification_token), checkDkim(dkim, row.dkim_public_key), names);
    // The row names its project: the recheck job works across projects, one domain (and scope) at a time.
    return this.domains.saveCheck(this.dataSource, projectScope(row.project_id), { id: row.id, result });
  }

  /**
   * Rechecks up to `batchSize` non-VERIFIED domains of every project, the longest unchecked first,
   * `concurrency` at a time (each check waits on DNS, at most a timeout per resolver).
   */
  async recheckPending(batchSize: number, concurrency: number): Promise<{ checked: number; verified: number }> {
    const rows = await this.domains.pendingBatch(this.dataSource, batchSize);
    let verified = 0;
    for (let i = 0; i < rows.length; i += concurrency) {
      const checked = await Promise.all(rows.slice(i, i + concurrency).map((row) => this.check(row)));
      verified += checked.filter((row) => row?.status === 'VERIFIED').length;
    }
    return { checked: rows.length, verified };
  }

  async remove(project: ProjectContext, id: string): Promise<void> {
    const row = await this.row(project, id);
    const users = await this.usersOfDomain(project, row.domain);
    if (users.length > 0) {
      const shown = users.slice(0, USERS_IN_MESSAGE).join(', ');
      const more = users.length > USERS_IN_MESSAGE ? ` and ${users.length - USERS_IN_MESSAGE} more` : '';
      throw new DomainError(
        MailErrorCode.DomainInUse,
        `domain ${row.domain} is in use by ${shown}${more}; change their from address first`,
        {
          status: 409,
        },
      );
    }
    if (!(await this.domains.delete(this.dataSource, scopeOf(project), row.id))) throw domainNotFound();
  }

  /**
   * What sends from the domain and would break if it were deleted, as short descriptions
   * (`template "Welcome" (<id>)`, `campaign "Spring sale" (<id>)`): templates, and campaigns that are
   * not finished (DRAFT, SCHEDULED, SENDING).
   */
  async usersOfDomain(project: ProjectContext, domain: string): Promise<string[]> {
    const input = { domain, limit: USERS_IN_MESSAGE + 1 };
    const [templates, campaigns] = await Promise.all([
      this.domains.templatesSendingFrom(this.dataSource, scopeOf(project), input),
      this.domains.unfinishedCampaignsSendingFrom(this.dataSource, scopeOf(project), input),
    ]);
    return [
      ...templates.map((template) => `template ${JSON.stringify(template.name)} (${template.id})`),
      ...campaigns.map((campaign) => `campaign ${JSON.stringify(campaign.name)} (${campaign.id})`),
    ];
  }

  /**
   * The project's VERIFIED domain of `fromEmail` (exact domain, case-insensitive: a verified parent does
   * not cover subdomains), for the send endpoint. 403 `DOMAIN_NOT_VERIFIED` otherwise.
   */
  async senderDomain(project: ProjectContext, fromEmail: string): Promise<SenderDomain> {
    const domain = domainOfAddress(fromEmail);
    const sender = domain ? await this.dkimForDomain(scopeOf(project), domain) : null;
    if (sender) return sender;
    const message = domain ? `sender domain ${domain} is not verified` : `sender address ${JSON.stringify(fromEmail)} has no domain`;
    throw new DomainError(MailErrorCode.DomainNotVerified, message, { status: 403 });
  }

  /**
   * The sender check of POST /v1/send: the same rule and 403 as `senderDomain`, without reading or
   * decrypting the DKIM key the send does not use (the worker opens it when it signs).
   */
  async assertVerifiedSender(project: ProjectContext, fromEmail: string): Promise<void> {
    const domain = domainOfAddress(fromEmail);
    if (domain && (await this.domains.isVerified(this.dataSource, scopeOf(project), domain))) return;
    const message = domain ? `sender domain ${domain} is not verified` : `sender address ${JSON.stringify(fromEmail)} has no domain`;
    throw new DomainError(MailErrorCode.DomainNotVerified, message, { status: 403 });
  }

  /** The signing key of a VERIFIED domain of the project; null when it is not (or no longer) VERIFIED. */
  async dkimForDomain(scope: ProjectScope, domain: string): Promise<SenderDomain | null> {
    const normalized = domainOfAddress(`@${domain}`);
    const row = normalized ? await this.domains.verifiedForSigning(this.dataSource, scope, normalized) : null;
    if (!row) return null;
    const dkimPrivateKey = this.dkimKeys.open(row.dkim_private_key, { projectId: scope.projectId, domain: row.domain });
    return { id: row.id, domain: row.domain, dkimSelector: row.dkim_selector, dkimPrivateKey };
  }

  private async row(project: ProjectContext, id: string): Promise<DomainRow> {
    const row = isUUID(id) ? await this.domains.findById(this.dataSource, scopeOf(project), id) : null;
    if (!row) throw domainNotFound();
    return row;
  }
}

function domainNotFound(): DomainError {
  return DomainError.notFound('domain not found');
}

function domainExists(domain: string): DomainError {
  return new DomainError(MailErrorCode.DomainExists, `domain ${domain} is already added to this project`, { status: 409 });
}
