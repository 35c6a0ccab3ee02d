/**
 * Partitions (decisions.md "Attachments"): who may read an attachment's file and how long clients
 * may cache it. Writes always need `attachments.manage` in the attachment's tenant.
 */
export interface AttachmentPartition {
  code: string;
  /** Reads without authentication, from any tenant. */
  publicRead: boolean;
  cacheControl: string;
}

export const DEFAULT_PARTITION = 'privateAttachments';

export const ATTACHMENT_PARTITIONS: Readonly<Record<string, AttachmentPartition>> = {
  privateAttachments: { code: 'privateAttachments', publicRead: false, cacheControl: 'private, max-age=3600' },
  publicMedia: { code: 'publicMedia', publicRead: true, cacheControl: 'public, max-age=31536000, immutable' },
};

export const PARTITION_CODES = Object.keys(ATTACHMENT_PARTITIONS);

/** Codes of the partitions anyone may read: the read query's public branch. */
export const PUBLIC_PARTITION_CODES = Object.values(ATTACHMENT_PARTITIONS)
  .filter((p) => p.publicRead)
  .map((p) => p.code);

/** The partition of a stored row; undefined when the row names one this deployment does not define (a 500). */
export function partitionOf(code: string): AttachmentPartition | undefined {
  return Object.hasOwn(ATTACHMENT_PARTITIONS, code) ? ATTACHMENT_PARTITIONS[code] : undefined;
}
