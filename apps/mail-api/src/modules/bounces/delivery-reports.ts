import { simpleParser } from 'mailparser';

/** What a report received by the inbound listener says about the email it names. */
export type DeliveryReport =
  /** RFC 3464: `Action: failed` with a 5.x.x status for a recipient. */
  | { kind: 'hard-bounce'; detail: string }
  /** RFC 5965 ARF with `Feedback-Type: abuse`. */
  | { kind: 'complaint'; detail: string }
  /** Anything else (a delay, a 4.x.x, another feedback type, not a report): changes nothing. */
  | { kind: 'ignored'; why: string };

const CRLF_CRLF = /\r?\n\r?\n/;

/**
 * Reads a delivery status notification (RFC 3464, `multipart/report; report-type=delivery-status`) or
 * a complaint (RFC 5965 ARF, `report-type=feedback-report`). The top-level headers are parsed by
 * mailparser; the machine-readable part (`message/delivery-status`, `message/feedback-report`), which
 * mailparser folds into the text body, is found by its own Content-Type between the report's MIME
 * boundaries and read as header-style fields. Linear in the message (at most 1 MB: the listener's cap),
 * no backtracking regular expressions.
 */
export async function readDeliveryReport(raw: Buffer): Promise<DeliveryReport> {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
  const contentType = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  if (contentType?.value?.toLowerCase() !== 'multipart/report') return { kind: 'ignored', why: 'not a multipart/report' };
  const reportType = (contentType.params?.['report-type'] ?? '').toLowerCase();
  const boundary = contentType.params?.boundary;
  if (!boundary) return { kind: 'ignored', why: 'no MIME boundary' };
  if (reportType === 'delivery-status') {
    const part = findPart(raw.toString('latin1'), boundary, ['message/delivery-status', 'message/global-delivery-status']);
    return part === null ? { kind: 'ignored', why: 'no delivery-status part' } : readDsn(part);
  }
  if (reportType === 'feedback-report') {
    const part = findPart(raw.toString('latin1'), boundary, ['message/feedback-report']);
    return part === null ? { kind: 'ignored', why: 'no feedback-report part' } : readArf(part);
  }
  return { kind: 'ignored', why: `report-type ${reportType || 'missing'}` };
}

function readDsn(body: string): DeliveryReport {
  // The per-message fields, then one group per recipient (RFC 3464 section 2.1).
  const recipients = fieldGroups(body).filter((g) => g.has('action'));
  for (const group of recipients) {
    const action = (group.get('action') ?? '').toLowerCase();
    const status = (group.get('status') ?? '').trim();
    if (action === 'failed' && status.startsWith('5.')) {
      const diagnostic = group.get('diagnostic-code');
      return { kind: 'hard-bounce', detail: `Status: ${status}${diagnostic ? `; Diagnostic-Code: ${diagnostic}` : ''}`.slice(0, 1000) };
    }
  }
  const first = recipients[0];
  return { kind: 'ignored', why: first ? `action ${first.get('action')} status ${first.get('status')}` : 'no recipient fields' };
}

function readArf(body: string): DeliveryReport {
  const [fields] = fieldGroups(body);
  const type = (fields?.get('feedback-type') ?? '').trim().toLowerCase();
  return type === 'abuse'
    ? { kind: 'complaint', detail: 'Feedback-Type: abuse' }
    : { kind: 'ignored', why: `feedback type ${type || 'missing'}` };
}

/** The body of the first MIME part (directly under the boundary) whose Content-Type is one of `types`, decoded. */
function findPart(message: string, boundary: string, types: string[]): string | null {
  const delimiter = `--${boundary}`;
  const headerEnd = message.search(CRLF_CRLF);
  let at = message.indexOf(delimiter, headerEnd < 0 ? 0 : headerEnd);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (message.startsWith('--', start)) return null; // the closing delimiter
    const next = message.indexOf(delimiter, start);
    const part = message.slice(start, next < 0 ? message.length : next);
    const split = part.search(CRLF_CRLF);
    if (split >= 0) {
      const headers = fieldGroups(part.slice(0, split))[0] ?? new Map<string, string>();
      const type = (headers.get('content-type') ?? 'text/plain').split(';')[0].trim().toLowerCase();
      if (types.includes(type)) return decode(part.slice(split).replace(/^\r?\n\r?\n/, ''), headers.get('content-transfer-encoding'));
    }
    at = next;
  }
  return null;
}

function decode(body: string, encoding: string | undefined): string {
  const kind = (encoding ?? '').trim().toLowerCase();
  if (kind === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (kind === 'quoted-printable') {
    return body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return body;
}

/**
 * Header-style fields (`Name: value`, continuation lines start with white space), in groups separated
 * by blank lines; names lower-cased, the first of a repeated name kept.
 */
function fieldGroups(text: string): Map<string, string>[] {
  const groups: Map<string, string>[] = [];
  let group = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      if (group.size > 0) groups.push(group);
      group = new Map();
      last = null;
    } else if ((line[0] === ' ' || line[0] === '\t') && last) {
      group.set(last, `${group.get(last)} ${line.trim()}`);
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      last = name;
      if (!group.has(name)) group.set(name, line.slice(colon + 1).trim());
      else last = null;
    }
  }
  if (group.size > 0) groups.push(group);
  return groups;
}
