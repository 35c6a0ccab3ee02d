import { isEmail } from 'class-validator';
import type { FieldError, MailSendAttachment, MailSendRequest, MailTemplate, MailTemplateType } from '@app/contracts';
import { MAX_EMAIL_LENGTH } from '../contacts/contacts.dto.js';
import { UNSIGNED_HEADER } from '../delivery/unsigned-delivery.js';
import { renderedSize } from '../templates/template-rendering.js';

/** Recipients of one request; more is a bulk send (campaigns). */
export const MAX_RECIPIENTS = 50;
export const MAX_ATTACHMENTS = 10;
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
export const MAX_NAME_LENGTH = 200;
export const MAX_SUBJECT_LENGTH = 998;
export const MAX_HEADERS = 50;
/**
 * The HTML body, as given and as rendered for each recipient: bytes of UTF-8, the unit of the
 * message size (the same cap as a template's body). Bounds what one email costs the worker.
 */
export const MAX_BODY_BYTES = 512 * 1024;
/** `data` serialized as JSON: what placeholders can draw from. */
export const MAX_DATA_BYTES = 64 * 1024;
/**
 * The subject as rendered for each recipient, in characters like the subject as given (RFC 5322's
 * 998-character line): `{{x}}` repeated must not turn a short template into megabytes of header.
 */
export const MAX_RENDERED_SUBJECT_LENGTH = MAX_SUBJECT_LENGTH;

/**
 * Headers the service writes itself: a request setting one would break the message structure, its
 * signature or the unsubscribe contract.
 */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'sender',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'dkim-signature',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'return-path',
  'received',
  UNSIGNED_HEADER.toLowerCase(),
]);
/** RFC 5322 field name: printable ASCII except colon. */
const HEADER_NAME = /^[!-9;-~]{1,76}$/;

export interface Address {
  email: string;
  name: string | null;
}

/** What one send request resolves to, after the template overlay: the same for every recipient until rendered. */
export interface ResolvedMessage {
  recipients: Address[];
  from: Address;
  replyTo: string | null;
  subject: string;
  body: string;
  type: MailTemplateType;
  templateId: string | null;
  headers: Record<string, string>;
  attachments: MailSendAttachment[];
}

const hasLineBreak = (value: string) => /[\r\n]/.test(value);

/** One `to`/`from` entry: an address, or `{name, email}`; null with a problem otherwise. */
function parseAddress(value: unknown, field: string, problems: FieldError[]): Address | null {
  const emailField = typeof value === 'string' ? field : `${field}.email`;
  if (typeof value === 'string') value = { email: value };
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    problems.push({ field, code: 'isAddress', message: `${field} must be an email address or {name, email}` });
    return null;
  }
  const { email, name } = value as { email?: unknown; name?: unknown };
  const trimmed = typeof email === 'string' ? email.trim() : email;
  if (typeof trimmed !== 'string' || trimmed.length > MAX_EMAIL_LENGTH || !isEmail(trimmed)) {
    problems.push({ field: emailField, code: 'isEmail', message: `${emailField} must be an email address` });
    return null;
  }
  if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > MAX_NAME_LENGTH || hasLineBreak(name))) {
    problems.push({
      field: `${field}.name`,
      code: 'isName',
      message: `${field}.name must be a string of at most ${MAX_NAME_LENGTH} characters without line breaks`,
    });
    return null;
  }
  return { email: trimmed, name: typeof name === 'string' && name.trim() ? name.trim() : null };
}

/** `to` in any of its forms, deduplicated by address (case-insensitive; the first spelling wins). */
export function parseRecipients(to: unknown, problems: FieldError[]): Address[] {
  const entries = Array.isArray(to) ? to : [to];
  if (entries.length === 0 || entries.length > MAX_RECIPIENTS) {
    problems.push({ field: 'to', code: 'arraySize', message: `to must hold 1 to ${MAX_RECIPIENTS} recipients` });
    return [];
  }
  const seen = new Map<string, Address>();
  entries.forEach((entry, i) => {
    const address = parseAddress(entry, Array.isArray(to) ? `to[${i}]` : 'to', problems);
    if (address && !seen.has(address.email.toLowerCase())) seen.set(address.email.toLowerCase(), address);
  });
  return [...seen.values()];
}

export function checkHeaders(headers: Record<string, string> | undefined, problems: FieldError[]): Record<string, string> {
  if (!headers) return {};
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) problems.push({ field: 'headers', code: 'maxHeaders', message: `at most ${MAX_HEADERS} headers` });
  for (const [name, value] of entries) {
    const field = `headers.${name}`;
    if (!HEADER_NAME.test(name))
      problems.push({ field, code: 'isHeaderName', message: `${JSON.stringify(name)} is not a valid header name` });
    else if (RESERVED_HEADERS.has(name.toLowerCase()))
      problems.push({ field, code: 'isReservedHeader', message: `${name} is set by the service` });
    if (typeof value !== 'string') problems.push({ field, code: 'isString', message: `${field} must be a string` });
    else if (hasLineBreak(value)) problems.push({ field, code: 'hasNoLineBreak', message: `${field} must not contain CR or LF` });
    else if (value.length > 998) problems.push({ field, code: 'maxLength', message: `${field} must be at most 998 characters` });
  }
  return headers;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** At most 10 attachments of valid base64, 10 MB decoded in total. */
export function checkAttachments(attachments: MailSendAttachment[] | undefined, problems: FieldError[]): MailSendAttachment[] {
  if (!attachments) return [];
  if (attachments.length > MAX_ATTACHMENTS) {
    problems.push({ field: 'attachments', code: 'arrayMaxSize', message: `at most ${MAX_ATTACHMENTS} attachments` });
    return [];
  }
  let bytes = 0;
  attachments.forEach((a, i) => {
    const content = a.content.replace(/\s+/g, '');
    if (content.length % 4 !== 0 || !BASE64.test(content)) {
      problems.push({ field: `attachments[${i}].content`, code: 'isBase64', message: `attachments[${i}].content must be base64` });
    }
    bytes += Math.floor((content.length * 3) / 4) - (content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0);
  });
  if (bytes > MAX_ATTACHMENT_BYTES) {
    problems.push({
      field: 'attachments',
      code: 'maxTotalSize',
      message: `attachments must not exceed ${MAX_ATTACHMENT_BYTES} bytes in total (got ${bytes})`,
    });
  }
  return attachments.map((a) => ({ filename: a.filename, content: a.content.replace(/\s+/g, ''), contentType: a.contentType }));
}

/**
 * The template's subject, body, from and reply-to, with the request's explicit fields on top
 * (decisions.md "Mail"). The sender name: `name`, else the name in `from`, else the template's.
 */
export function resolveMessage(input: MailSendRequest, template: MailTemplate | null, problems: FieldError[]): ResolvedMessage | null {
  const recipients = parseRecipients(input.to, problems);
  const fromInput = input.from ?? template?.from ?? undefined;
  let from: Address | null = null;
  if (fromInput === undefined)
    problems.push({ field: 'from', code: 'isDefined', message: 'from is required (the template has no from address)' });
  else from = parseAddress(fromInput, 'from', problems);
  const subject = input.subject ?? template?.subject;
  const body = input.body ?? template?.body;
  if (subject === undefined)
    problems.push({ field: 'subject', code: 'isDefined', message: 'subject is required unless a template is used' });
  if (body === undefined) problems.push({ field: 'body', code: 'isDefined', message: 'body is required unless a template is used' });
  const headers = checkHeaders(input.headers, problems);
  const attachments = checkAttachments(input.attachments, problems);
  if (problems.length > 0 || !from || subject === undefined || body === undefined) return null;
  const senderName = input.name?.trim() || from.name || template?.fromName || null;
  return {
    recipients,
    from: { email: from.email, name: senderName },
    replyTo: input.reply ?? template?.replyTo ?? null,
    subject,
    body,
    type: template?.type ?? 'TRANSACTIONAL',
    templateId: template?.id ?? null,
    headers,
    attachments,
  };
}

/** A recipient and the variables their copy is rendered with. */
export interface RecipientVariables {
  email: string;
  variables: Record<string, unknown>;
}

/**
 * Placeholders multiply: 500 KB of `{{x}}` with a 60 KB `x` would be 6 GB per recipient. Every
 * recipient's subject and body are measured before anything is rendered or written (renderedSize
 * counts without building the text, and stops at the cap), and the first recipient over a cap is
 * named in a 422.
 */
export function renderedSizeProblems(subject: string, body: string, recipients: RecipientVariables[]): FieldError[] {
  const problems: FieldError[] = [];
  const subjectOver = recipients.find(
    (r) =>
      renderedSize(subject, r.variables, { escapeHtml: false, unit: 'utf16', limit: MAX_RENDERED_SUBJECT_LENGTH }) >
      MAX_RENDERED_SUBJECT_LENGTH,
  );
  if (subjectOver) {
    problems.push({
      field: 'subject',
      code: 'maxRenderedLength',
      message: `subject must render to at most ${MAX_RENDERED_SUBJECT_LENGTH} characters; for ${subjectOver.email} it renders to more`,
    });
  }
  const bodyOver = recipients.find(
    (r) => renderedSize(body, r.variables, { escapeHtml: true, unit: 'utf8', limit: MAX_BODY_BYTES }) > MAX_BODY_BYTES,
  );
  if (bodyOver) {
    problems.push({
      field: 'body',
      code: 'maxRenderedSize',
      message: `body must render to at most ${MAX_BODY_BYTES} bytes (512 KB) of UTF-8; for ${bodyOver.email} it renders to more`,
    });
  }
  return problems;
}
