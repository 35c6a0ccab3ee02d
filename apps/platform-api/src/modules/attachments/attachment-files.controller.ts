import { Get, Headers, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiInternalServerErrorResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
} from '@nestjs/swagger';
import { CurrentAuth } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import { AttachmentFilesService } from './attachment-files.service.js';
import { AttachmentIdParams, FileQuery } from './attachments.dto.js';
import { toWebResponse } from './file-response.js';
import { ApiServedAttachmentResponses, AttachmentServingController } from './attachment-serving.decorators.js';

@AttachmentServingController('attachments/file')
export class AttachmentFilesController {
  constructor(private readonly files: AttachmentFilesService) {}

  @Get(['', ':id'])
  @ApiProduces('*/*')
  @ApiOperation({
    summary: 'Download an attachment’s file',
    description:
      'The bytes with their sniffed type, `ETag` (the SHA-256; `If-None-Match` gives 304), `Accept-Ranges: bytes` (one ' +
      'range `bytes=a-b`, `a-` or `-n` gives 206 with `Content-Range`, an unsatisfiable one 416) and the partition’s ' +
      '`Cache-Control`. `download=1` forces `Content-Disposition: attachment`; anything but JPEG, PNG, GIF, WebP and ' +
      'PDF (HTML, SVG, XML, unknown types) is always a download, with `X-Content-Type-Options: nosniff` and ' +
      "`Content-Security-Policy: default-src 'none'; sandbox`. Private partition: a session (bearer or `auth_token` " +
      'cookie) and `attachments.view`; without a session any id but a public one is 401, another tenant’s id 404. ' +
      'Public partition: no authentication. Reads of the caller’s own tenant’s files are recorded in the access log.',
  })
  @ApiOkResponse({ description: 'The file.', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 206, description: 'The requested range.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } })
  @ApiResponse({ status: 416, type: ErrorDto, description: 'Range not satisfiable.' })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing or invalid id.' })
  @ApiServedAttachmentResponses()
  @ApiInternalServerErrorResponse({ type: ErrorDto, description: 'Partition misconfigured or stored bytes missing.' })
  async file(
    @CurrentAuth() auth: AuthContext | null,
    @Param() params: AttachmentIdParams,
    @Query() query: FileQuery,
    @Headers('range') range?: string,
    @Headers('if-none-match') ifNoneMatch?: string,
    @Headers('if-range') ifRange?: string,
  ): Promise<Response> {
    const served = await this.files.serve(auth, params.id, { download: query.download === '1', range, ifNoneMatch, ifRange });
    return toWebResponse(served);
  }
}
