import { Get, Headers, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiInternalServerErrorResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ClientIp, CurrentAuth } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import { AttachmentImagesService } from './attachment-images.service.js';
import { ImageParams, ImageQuery } from './attachments.dto.js';
import { toWebResponse } from './file-response.js';
import { ApiServedAttachmentResponses, AttachmentServingController } from './attachment-serving.decorators.js';

@AttachmentServingController('attachments/image')
export class AttachmentImagesController {
  constructor(private readonly images: AttachmentImagesService) {}

  @Get(['', ':id', ':id/:slug'])
  @ApiProduces('image/jpeg', 'image/png', 'image/webp', 'image/gif')
  @ApiOperation({
    summary: 'An attachment’s image, resized',
    description:
      '`slug` is free text for readable URLs (ignored). `width` and `height` 1..4000, each clamped to the source’s ' +
      '(as displayed): an image is never upscaled. `cropType` `cover` (default: exactly the clamped width x height, ' +
      'centred crop) or `contain` (inside them, aspect ratio kept); with one dimension the other follows the aspect ' +
      'ratio; with neither, the original. Output in the source’s format (JPEG, PNG, WebP, GIF), EXIF orientation ' +
      'applied, metadata stripped. Each variant is rendered once (concurrent first requests share the render) and ' +
      'stored; at most 25 variants per attachment are kept, the least recently served beyond are removed. Renders ' +
      'for callers without a session: at most 60 a minute per client address (429 with Retry-After; stored variants ' +
      'are served regardless). `ETag` per variant (304 on If-None-Match); `Cache-Control` `private, max-age=3600` ' +
      '(private partition) or `public, max-age=31536000, immutable` (public). Sources over 50 megapixels are refused ' +
      '(400). Access as `GET /attachments/file/{id}`.',
  })
  @ApiOkResponse({ description: 'The image.', schema: { type: 'string', format: 'binary' } })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid id or parameters, not an image, or too many pixels.' })
  @ApiServedAttachmentResponses()
  @ApiTooManyRequestsResponse({ type: ErrorDto, description: 'Too many renders without a session from this address (Retry-After).' })
  @ApiInternalServerErrorResponse({ type: ErrorDto, description: 'Partition misconfigured or render failed.' })
  async image(
    @CurrentAuth() auth: AuthContext | null,
    @Param() params: ImageParams,
    @Query() query: ImageQuery,
    @ClientIp() ip: string,
    @Headers('if-none-match') ifNoneMatch?: string,
  ): Promise<Response> {
    const served = await this.images.serve(auth, params.id, { ...query, ifNoneMatch }, { ip });
    return toWebResponse(served);
  }
}
