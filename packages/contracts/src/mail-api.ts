/**
 * Mail API request and response shapes (mail-api.md, decisions.md "Mail"): contacts, tracked events and
 * address verification. Timestamps are ISO 8601 strings.
 */

/** Error codes of the mail API beyond the generic ones in `ErrorCode`. */
export const MailErrorCode = {
  /** 401: a key was sent but is not `sk_`/`pk_` + 48 hex, or belongs to no project. */
  InvalidApiKey: 'INVALID_API_KEY',
  /** 403: the key's project is disabled. */
  ProjectDisabled: 'PROJECT_DISABLED',
  /** 403: a public key (`pk_`) on a route that needs the secret key. */
  SecretKeyRequired: 'SECRET_KEY_REQUIRED',
  /** 403: the sender address is not on a VERIFIED domain of the project. */
  DomainNotVerified: 'DOMAIN_NOT_VERIFIED',
  /** 409: the domain is already added to the project. */
  DomainExists: 'DOMAIN_EXISTS',
  /** 409: DELETE of a domain a template or an active campaign sends from. */
  DomainInUse: 'DOMAIN_IN_USE',
  /** 409: the Idempotency-Key was used with a different request body, or its first request is still running. */
  IdempotencyConflict: 'IDEMPOTENCY_CONFLICT',
  /** 400/422: an unsubscribe link whose signature does not match. */
  InvalidUnsubscribeLink: 'INVALID_UNSUBSCRIBE_LINK',
} as const;
export type MailErrorCode = (typeof MailErrorCode)[keyof typeof MailErrorCode];

/** Event name prefixes the service keeps for its own events; tracking one is a 422. */
export const RESERVED_EVENT_PREFIXES = ['email.', 'contact.'] as const;

/** A `data` value: a primitive, or `{value, persistent}` (`persistent: false`: for that event only). */
export type ContactDataPrimitive = string | number | boolean | null;
export type ContactDataInput = Record<string, ContactDataPrimitive | { value: ContactDataPrimitive; persistent?: boolean }>;

export interface MailContact {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, ContactDataPrimitive>;
  createdAt: string;
  updatedAt: string;
}

/** `POST /contacts`: 201 when created, 200 when an existing contact (same email) was updated. */
export interface MailContactUpsertResult extends MailContact {
  _meta: { isNew: boolean; isUpdate: boolean };
}

/** `GET /contacts` (its own list shape, per the spec). */
export interface MailContactList {
  contacts: MailContact[];
  /** Pass as `cursor` for the next page; null on the last page. */
  cursor: string | null;
  hasMore: boolean;
  total: number;
}

/** The list shape of every other mail list endpoint. */
export interface MailList<T> {
  items: T[];
  nextCursor: string | null;
  hasMore: boolean;
  total: number;
}

export interface MailTrackRequest {
  email: string;
  event: string;
  subscribed?: boolean;
  data?: ContactDataInput;
}

/** `POST /v1/track` → `{success: true, data}`. `contact` and `event` are ids. */
export interface MailTrackResult {
  contact: string;
  event: string;
  timestamp: string;
}

export interface MailTrackedEvent {
  id: string;
  name: string;
  contact: { id: string; email: string };
  data: Record<string, ContactDataPrimitive>;
  createdAt: string;
}

export interface MailEventName {
  name: string;
  count: number;
  lastTrackedAt: string;
}

/** `POST /v1/verify` → `{success: true, data}`, fields in this order. */
export interface MailVerificationResult {
  email: string;
  valid: boolean;
  isDisposable: boolean;
  isAlias: boolean;
  isTypo: boolean;
  isPlusAddressed: boolean;
  isPersonalEmail: boolean;
  domainExists: boolean;
  hasWebsite: boolean;
  hasMxRecords: boolean;
  reasons: string[];
  /** The corrected address when `isTypo`. */
  suggestion?: string;
}

/** `/v1/*` success bodies. */
export interface MailSuccess<T> {
  success: true;
  data: T;
}

export type MailTemplateType = 'TRANSACTIONAL' | 'MARKETING';

/** Templates (`/templates`). `from` is the sender address, `fromName` its display name. */
export interface MailTemplate {
  id: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from: string | null;
  fromName: string | null;
  replyTo: string | null;
  type: MailTemplateType;
  createdAt: string;
  updatedAt: string;
}

export type MailDomainStatus = 'PENDING' | 'VERIFIED' | 'FAILED';

/** A DNS record to publish: `name` fully qualified, TXT `value` unquoted. */
export interface MailDnsRecord {
  type: 'TXT';
  name: string;
  value: string;
  /** Whether the last check found it (absent before the first check). */
  verified?: boolean;
}

export interface MailDomain {
  id: string;
  domain: string;
  status: MailDomainStatus;
  verified: boolean;
  records: MailDnsRecord[];
  /** Why the last check failed, one line per missing or wrong record. */
  failureReasons: string[];
  lastCheckedAt: string | null;
  verifiedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type MailAddressInput = string | { name?: string; email: string };

export interface MailSendAttachment {
  filename: string;
  /** Base64. */
  content: string;
  contentType?: string;
}

/** `POST /v1/send` (decisions.md "Mail" names the fields the spec leaves open). */
export interface MailSendRequest {
  to: MailAddressInput | MailAddressInput[];
  subject?: string;
  body?: string;
  from?: MailAddressInput;
  /** Sender display name (overrides `from.name` and the template's). */
  name?: string;
  /** Template id. */
  template?: string;
  data?: Record<string, unknown>;
  /** Subscription state of contacts the send creates (default false); existing contacts keep theirs unless given. */
  subscribed?: boolean;
  headers?: Record<string, string>;
  /** Reply-to address. */
  reply?: string;
  attachments?: MailSendAttachment[];
}

/** `POST /v1/send` → `{success: true, data}`. `email` is the email id. */
export interface MailSendResult {
  emails: { contact: { id: string; email: string }; email: string }[];
  timestamp: string;
}

/**
 * Every status an email can hold (the `emails.status` check constraint allows exactly these):
 * `QUEUED`, `SENDING` (claimed by a worker), `SENT` (accepted by the relay), `FAILED` (refused for good,
 * or retries exhausted), `CANCELLED` (its campaign was cancelled before it went out: never sent),
 * `SUPPRESSED` (the recipient was on the suppression list when it was about to be handed to SMTP: never
 * sent) and `BOUNCED` (accepted, then bounced by an asynchronous delivery status notification).
 */
export const MAIL_EMAIL_STATUSES = ['QUEUED', 'SENDING', 'SENT', 'FAILED', 'CANCELLED', 'SUPPRESSED', 'BOUNCED'] as const;
export type MailEmailStatus = (typeof MAIL_EMAIL_STATUSES)[number];
