import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { MailContact, MailContactList, MailContactUpsertResult } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { ResponseStatusInterceptor, WithStatus } from '../../core/http/response-status.js';
import {
  ContactListResponse,
  ContactResponse,
  ContactUpsertResponse,
  ListContactsQuery,
  UpdateContactBody,
  UpsertContactBody,
} from './contacts.dto.js';
import { ContactsService } from './contacts.service.js';

@ApiTags('contacts')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('contacts')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Get()
  @ApiOperation({
    summary: 'List contacts',
    description:
      'Newest first, keyset-paged by id: pass `cursor` from the previous page; it is null on the last page. ' +
      '`total` counts every contact matching the filters. `search` is a case-insensitive substring of the email.',
  })
  @ApiOkResponse({ type: ContactListResponse })
  @ApiMailErrors(422)
  list(@CurrentProject() project: ProjectContext, @Query() query: ListContactsQuery): Promise<MailContactList> {
    return this.contacts.list(project, query);
  }

  @Post()
  @UseInterceptors(ResponseStatusInterceptor)
  @ApiOperation({
    summary: 'Create or update a contact by email',
    description:
      '201 with `_meta.isNew` when the email is new to the project, 200 with `_meta.isUpdate` when it updated ' +
      'the existing contact (emails match case-insensitively; the stored email keeps its first spelling). ' +
      'Concurrent calls for one email create exactly one contact.',
  })
  @ApiResponse({ status: 201, type: ContactUpsertResponse, description: 'Created.' })
  @ApiResponse({ status: 200, type: ContactUpsertResponse, description: 'Updated the existing contact.' })
  @ApiMailErrors(422)
  async upsert(@CurrentProject() project: ProjectContext, @Body() body: UpsertContactBody): Promise<WithStatus<MailContactUpsertResult>> {
    const { contact, created } = await this.contacts.upsert(project, body);
    return new WithStatus(created ? 201 : 200, contact);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a contact' })
  @ApiOkResponse({ type: ContactResponse })
  @ApiMailErrors(404)
  get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailContact> {
    return this.contacts.get(project, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update a contact', description: '`data` merges key by key, as in POST /contacts.' })
  @ApiOkResponse({ type: ContactResponse })
  @ApiMailErrors(404, 422)
  update(@CurrentProject() project: ProjectContext, @Param('id') id: string, @Body() body: UpdateContactBody): Promise<MailContact> {
    return this.contacts.update(project, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a contact and its tracked events' })
  @ApiNoContentResponse()
  @ApiMailErrors(404)
  remove(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<void> {
    return this.contacts.remove(project, id);
  }
}
