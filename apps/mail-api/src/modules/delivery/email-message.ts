import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { SendMailOptions } from 'nodemailer';
import type { ClaimedEmail } from './email-rows.js';
import { htmlToText } from './html-text.js';
import { UNSIGNED_HEADER } from './unsigned-delivery.js';

/**
 * Headers a sender's custom `headers` may not set: the ones the pipeline owns (addresses, subject,
 * the deterministic Message-ID, the signature, the unsubscribe headers) and MIME structure.
 */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'sender',
  'subject',
  'date',
  'message-id',
  'dkim-signature',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'auto-submitted',
  'precedence',
  'content-type',
  'content-transfer-encoding',
  'mime-version',
  UNSIGNED_HEADER.toLowerCase(),
]);

/**
 * The headers the DKIM signature covers: nodemailer's default list plus List-Unsubscribe-Post, which
 * RFC 8058 requires to be signed together with List-Unsubscribe (mailbox providers ignore one-click
 * unsubscribe otherwise).
 */
const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
].join(':');

/**
 * Parsed DKIM keys by PEM text. Signing with the PEM string makes OpenSSL parse the key on every
 * message, which costs twice the RSA signature itself (0.55 ms of 0.8 ms here): the per-email CPU
 * that bounds a worker's throughput. Bounded by the number of verified domains; cleared if huge.
 */
const dkimKeys = new Map<string, KeyObject>();

function dkimKey(pem: string): KeyObject {
  let key = dkimKeys.get(pem);
  if (!key) {
    if (dkimKeys.size >= 1000) dkimKeys.clear();
    key = createPrivateKey(pem);
    dkimKeys.set(pem, key);
  }
  return key;
}

function signingOptions(dkim: NonNullable<ClaimedEmail['dkim']>): NonNullable<SendMailOptions['dkim']> {
  // nodemailer hands the key to crypto's sign(), which takes a KeyObject; its typings only say string.
  const privateKey = dkimKey(dkim.privateKey) as unknown as string;
  return { domainName: dkim.domainName, keySelector: dkim.keySelector, privateKey, headerFieldNames: DKIM_SIGNED_HEADERS };
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

function customHeaders(headers: Record<string, string | number | boolean | null> | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase()) || value === null || value === undefined) continue;
    out[name] = String(value).replace(/[\r\n]+/g, ' ');
  }
  return out;
}

/**
 * The nodemailer message of a claimed email, DKIM-signed with its verified from domain. Without one
 * (allowed only for the development outbox, see unsigned-delivery.ts) it goes unsigned, with
 * `unsignedReason` in the X-Mail-Api-Unsigned header. The Message-ID is derived from the email id,
 * so a second delivery of the same email (the one window exactly-once cannot close: accepted by
 * SMTP, killed before SENT was committed) carries the same id and receivers can drop it as a duplicate.
 * `trackedHtml`: the HTML part with tracking links and pixel (marketing email); the plain-text part
 * keeps the original links. Every email carries `Auto-Submitted: auto-generated`, marketing email (a
 * campaign's, a workflow's) also `Precedence: bulk`. `returnPath`: the VERP envelope sender (verp.ts);
 * null keeps the from address.
 */
export function buildMessage(
  email: ClaimedEmail,
  unsubscribeUrl: string | null,
  unsignedReason: string | null = null,
  trackedHtml: string | null = null,
  returnPath: string | null = null,
): SendMailOptions {
  const headers = customHeaders(email.headers);
  // RFC 3834: no automatic replies (vacation notices) to generated mail; bulk mail says so too.
  headers['Auto-Submitted'] = 'auto-generated';
  if (email.type === 'MARKETING' || email.campaignId || email.workflowId) headers.Precedence = 'bulk';
  if (!email.dkim && unsignedReason) headers[UNSIGNED_HEADER] = unsignedReason;
  if (unsubscribeUrl) {
    headers['List-Unsubscribe'] = `<${unsubscribeUrl}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  return {
    messageId: `<${email.id}@${domainOf(email.fromEmail)}>`,
    from: { name: email.fromName ?? '', address: email.fromEmail },
    to: { name: email.toName ?? '', address: email.toEmail },
    ...(email.replyTo ? { replyTo: email.replyTo } : {}),
    subject: email.subject,
    html: trackedHtml ?? email.html,
    text: htmlToText(email.html),
    headers,
    attachments: email.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      encoding: 'base64',
      ...(a.contentType ? { contentType: a.contentType } : {}),
    })),
    ...(email.dkim ? { dkim: signingOptions(email.dkim) } : {}),
    // VERP: bounces and complaints come back to an address naming this email (verp.ts).
    ...(returnPath ? { envelope: { from: returnPath, to: email.toEmail } } : {}),
  };
}
