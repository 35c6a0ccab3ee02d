import { Body, Controller, Delete, Get, HttpCode, Post, Query, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ReturnsUndoTokens } from '../../core/audit/undo-token.js';
import { ErrorDto, OkDto } from '../../core/http/common.dto.js';
import { DEFAULT_PARTITION, PARTITION_CODES } from './attachment-partitions.js';
import { AttachmentIdQuery, AttachmentListDto, ListAttachmentsQuery, UploadAttachmentDto, UploadResultDto } from './attachments.dto.js';
import { AttachmentsService } from './attachments.service.js';
import type { UploadedAttachmentFile } from './storage/streaming-upload.engine.js';

@ApiTags('attachments')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ReturnsUndoTokens()
@Controller('attachments')
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  @Get()
  @RequireFeatures('attachments.view')
  @ApiOperation({
    summary: 'List a record’s attachments',
    description:
      'The attachments of one record (entityId + recordId) in the caller’s tenant (and organizations), every partition, ' +
      'newest first; `pageSize` default 50, at most 200. Each read is recorded in the access log (`read:list`).',
  })
  @ApiOkResponse({ type: AttachmentListDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing entityId or recordId, or invalid paging.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing attachments.view.' })
  list(@CurrentAuth() auth: AuthContext, @Query() query: ListAttachmentsQuery) {
    return this.attachments.list(auth, query);
  }

  @Post()
  @HttpCode(200)
  @RequireFeatures('attachments.manage')
  @UseInterceptors(FileInterceptor('file'))
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['entityId', 'recordId', 'file'],
      properties: {
        entityId: { type: 'string', maxLength: 255 },
        recordId: { type: 'string', maxLength: 255 },
        partitionCode: { type: 'string', enum: PARTITION_CODES, default: DEFAULT_PARTITION },
        file: { type: 'string', format: 'binary' },
      },
    },
  })
  @ApiOperation({
    summary: 'Upload an attachment',
    description:
      'Multipart form: `entityId`, `recordId`, optional `partitionCode` (`privateAttachments` by default: tenant only; ' +
      '`publicMedia`: files readable without authentication) and one file in the field `file`, at most 25 MB (413 ' +
      'beyond, refused while streaming). The bytes are streamed to storage, never held whole in memory; `mimeType` is ' +
      'sniffed from them (JPEG, PNG, GIF, WebP, PDF, SVG, HTML, XML, else application/octet-stream), the client’s type ' +
      'is ignored. Recorded in the action log (not undoable); emits `attachments.attachment.created`.',
  })
  @ApiOkResponse({ type: UploadResultDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing file, entityId or recordId; unknown partitionCode; malformed form.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing attachments.manage.' })
  @ApiPayloadTooLargeResponse({ type: ErrorDto, description: 'The file is larger than 25 MB.' })
  upload(@CurrentAuth() auth: AuthContext, @Body() body: UploadAttachmentDto, @UploadedFile() file: UploadedAttachmentFile | undefined) {
    return this.attachments.upload(auth, body, file);
  }

  @Delete()
  @HttpCode(200)
  @RequireFeatures('attachments.manage')
  @ApiOperation({
    summary: 'Delete an attachment',
    description:
      'Removes the row (action log entry, not undoable; event `attachments.attachment.deleted`), then the stored file ' +
      'and its resized variants. Another tenant’s id is 404.',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing or invalid id.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing attachments.manage.' })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'attachment not found' })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: AttachmentIdQuery) {
    return this.attachments.remove(auth, query.id);
  }
}
