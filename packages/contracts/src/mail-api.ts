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
