/**
 * The MIME type of an upload, decided from its first bytes, never from the client's claim: binary
 * formats by their magic numbers, markup (SVG, HTML, XML) by its text prefix, anything else
 * `application/octet-stream`.
 */
export const SNIFF_BYTES = 1024;

export const MimeType = {
  Jpeg: 'image/jpeg',
  Png: 'image/png',
  Gif: 'image/gif',
  Webp: 'image/webp',
  Pdf: 'application/pdf',
  Svg: 'image/svg+xml',
  Html: 'text/html',
  Xml: 'application/xml',
  Binary: 'application/octet-stream',
} as const;
export type SniffedMimeType = (typeof MimeType)[keyof typeof MimeType];

/** Types a browser may show inline: raster images and PDF. Everything else is served as a download. */
const INLINE_TYPES: ReadonlySet<string> = new Set([MimeType.Jpeg, MimeType.Png, MimeType.Gif, MimeType.Webp, MimeType.Pdf]);

/** Raster formats the image route resizes (output in the same format). */
export const RESIZABLE_TYPES: ReadonlySet<string> = new Set([MimeType.Jpeg, MimeType.Png, MimeType.Gif, MimeType.Webp]);

export function isInlineSafe(mimeType: string): boolean {
  return INLINE_TYPES.has(mimeType);
}

const MAGIC: { type: SniffedMimeType; bytes: number[]; offset?: number }[] = [
  { type: MimeType.Jpeg, bytes: [0xff, 0xd8, 0xff] },
  { type: MimeType.Png, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: MimeType.Gif, bytes: [...'GIF87a'].map((c) => c.charCodeAt(0)) },
  { type: MimeType.Gif, bytes: [...'GIF89a'].map((c) => c.charCodeAt(0)) },
  { type: MimeType.Pdf, bytes: [...'%PDF-'].map((c) => c.charCodeAt(0)) },
];

/**
 * The tags the WHATWG MIME sniffing standard treats as HTML when a document starts with them (after
 * whitespace), each followed by a space or `>`; `<!--` as well.
 */
const HTML_TAGS = [
  '!doctype html',
  'html',
  'head',
  'script',
  'iframe',
  'h1',
  'div',
  'font',
  'table',
  'a',
  'style',
  'title',
  'b',
  'body',
  'br',
  'p',
];

export function sniffMimeType(head: Buffer): SniffedMimeType {
  for (const { type, bytes } of MAGIC) {
    if (startsWith(head, bytes, 0)) return type;
  }
  if (startsWith(head, [0x52, 0x49, 0x46, 0x46], 0) && startsWith(head, [0x57, 0x45, 0x42, 0x50], 8)) return MimeType.Webp;
  return sniffMarkup(head);
}

function startsWith(buf: Buffer, bytes: number[], offset: number): boolean {
  if (buf.length < offset + bytes.length) return false;
  return bytes.every((b, i) => buf[offset + i] === b);
}

/**
 * Markup by its prefix: leading BOM and whitespace skipped, compared case-insensitively. An XML
 * prolog, a doctype or a comment may precede an `<svg` root, so an `<svg` tag anywhere in the head
 * of such a document makes it SVG. (`indexOf` over at most SNIFF_BYTES: linear, no regex on input.)
 */
function sniffMarkup(head: Buffer): SniffedMimeType {
  let start = startsWith(head, [0xef, 0xbb, 0xbf], 0) ? 3 : 0;
  while (start < head.length && isWhitespace(head[start])) start += 1;
  const text = head
    .subarray(start, start + SNIFF_BYTES)
    .toString('latin1')
    .toLowerCase();
  if (!text.startsWith('<')) return MimeType.Binary;
  const hasSvgRoot = text.includes('<svg');
  if (text.startsWith('<svg') || text.startsWith('<!doctype svg')) return MimeType.Svg;
  if (text.startsWith('<?xml')) {
    if (hasSvgRoot) return MimeType.Svg;
    return text.includes('<html') || text.includes('<!doctype html') ? MimeType.Html : MimeType.Xml;
  }
  if (text.startsWith('<!--')) return hasSvgRoot ? MimeType.Svg : MimeType.Html;
  for (const tag of HTML_TAGS) {
    if (text.startsWith(`<${tag}`)) {
      const next = text.charCodeAt(tag.length + 1);
      if (next === 0x20 || next === 0x3e || next === 0x09 || next === 0x0a || next === 0x0d) return MimeType.Html;
    }
  }
  return MimeType.Binary;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d;
}
