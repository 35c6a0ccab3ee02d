import { Injectable } from '@nestjs/common';
import { type Db, query } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';

/** Reads of the attachments table (written by the attachments module) that chat needs: media types. */
@Injectable()
export class ChatAttachmentsRepository {
  /** Of `ids`, those in the scope (tenant, and organizations when restricted), with their media type. */
  async mediaTypes(db: Db, scope: TenantScope, ids: string[]): Promise<{ id: string; mimeType: string }[]> {
    if (ids.length === 0) return [];
    return query<{ id: string; mimeType: string }>(
      db,
      `SELECT id, mime_type AS "mimeType" FROM attachments
        WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND ($3::uuid[] IS NULL OR organization_id IS NULL OR organization_id = ANY($3::uuid[]))`,
      [scope.tenantId, ids, scope.organizationIds],
    );
  }
}
