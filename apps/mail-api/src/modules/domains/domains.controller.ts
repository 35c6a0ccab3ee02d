import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { MailDomain, MailList } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors, MailErrorBodyDto } from '../../core/http/openapi-errors.js';
import { CreateDomainBody, DomainListResponse, DomainResponse, ListDomainsQuery } from './domains.dto.js';
import { DomainsService } from './domains.service.js';

@ApiTags('domains')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('domains')
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  @Get()
  @ApiOperation({
    summary: 'List sending domains',
    description:
      "The project's domains with their status, newest first, keyset-paged by id (`nextCursor` is null on the last " +
      'page). `?status=VERIFIED` lists the domains you can send from.',
  })
  @ApiOkResponse({ type: DomainListResponse })
  @ApiMailErrors(422)
  list(@CurrentProject() project: ProjectContext, @Query() query: ListDomainsQuery): Promise<MailList<MailDomain>> {
    return this.domains.list(project, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Add a domain for verification',
    description:
      'Answers 201 with the domain in status PENDING and two TXT records to publish: the ownership token ' +
      '`mail-verification=<32 hex>` at `_mail-verification.<domain>`, and the DKIM public key (RSA 2048, generated ' +
      'here; the private key is never returned) at `<selector>._domainkey.<domain>` with a random selector ' +
      '`mail<8 hex>`. Then call POST /domains/{id}/verify. Only the exact domain is verified: a subdomain needs ' +
      'its own entry. The same domain twice in a project: 409 `DOMAIN_EXISTS`.',
  })
  @ApiCreatedResponse({ type: DomainResponse })
  @ApiResponse({ status: 409, type: MailErrorBodyDto, description: '`DOMAIN_EXISTS`: the project already has this domain.' })
  @ApiMailErrors(422)
  create(@CurrentProject() project: ProjectContext, @Body() body: CreateDomainBody): Promise<MailDomain> {
    return this.domains.create(project, body.domain);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a domain', description: 'With its records and the outcome of the last check.' })
  @ApiOkResponse({ type: DomainResponse })
  @ApiMailErrors(404)
  get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailDomain> {
    return this.domains.get(project, id);
  }

  @Post(':id/verify')
  @HttpCode(200)
  @ApiOperation({
    summary: "Check the domain's DNS records now",
    description:
      'Looks both TXT records up now through the configured resolvers (no cache: records published a moment ago ' +
      'count) and answers the domain. Both found with the right values: VERIFIED. A record missing or with another ' +
      'value: FAILED, with one `failureReasons` line per record. A DNS failure (timeout, SERVFAIL) changes no ' +
      'status (a PENDING domain stays PENDING) and adds a reason. A VERIFIED domain stays VERIFIED while its DKIM ' +
      'record still matches (removing the ownership token afterwards is fine); a DKIM record gone or changed makes ' +
      'it FAILED, and mail from it is refused until it verifies again. Each record carries `verified`. A background ' +
      'job rechecks PENDING and FAILED domains periodically.',
  })
  @ApiOkResponse({ type: DomainResponse })
  @ApiMailErrors(404)
  verify(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailDomain> {
    return this.domains.verify(project, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a domain',
    description: 'Refused with 409 `DOMAIN_IN_USE` while a template of the project has a `from` address at this domain.',
  })
  @ApiNoContentResponse()
  @ApiResponse({ status: 409, type: MailErrorBodyDto, description: '`DOMAIN_IN_USE`: a template sends from this domain.' })
  @ApiMailErrors(404)
  remove(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<void> {
    return this.domains.remove(project, id);
  }
}
