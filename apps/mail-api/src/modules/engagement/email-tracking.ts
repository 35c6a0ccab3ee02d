import { decodeHTMLAttribute } from 'entities';
import { MAX_TRACKED_URL_BYTES } from './tracking-links.js';

export interface TrackingUrls {
  /** The open pixel's URL. */
  open: string;
  /** The click-redirect URL of a link of the email. */
  click(url: string): string;
  /** Links that stay as they are: this service's own (unsubscribe) links. */
  keep(url: string): boolean;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r', '\f']);
const HTTP_URL = /^https?:\/\/[^\s]/i;

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

/** The `href` value of an `<a>` tag: where it is in the source (quotes included) and its text. */
interface Href {
  start: number;
  end: number;
  raw: string;
}

/**
 * The marketing email as sent when tracking is on: every `<a href="http(s)://...">` goes through a
 * signed click redirect and a 1x1 pixel is added before `</body>` (or at the end). Links of the service
 * itself (unsubscribe), other schemes (`mailto:`, `#...`) and overlong URLs stay as they are.
 *
 * One left-to-right scan, each character read a bounded number of times (no backtracking regex over
 * the body: a crafted 512 KB body costs what any 512 KB body costs). Markup it does not understand is
 * copied unchanged.
 */
export function addTracking(html: string, urls: TrackingUrls): string {
  const out: string[] = [];
  let copied = 0;
  let pos = 0;
  while (pos < html.length) {
    const lt = html.indexOf('<', pos);
    if (lt < 0) break;
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      pos = close < 0 ? html.length : close + 3;
      continue;
    }
    if (!isAnchorStart(html, lt)) {
      pos = lt + 1;
      continue;
    }
    const tag = scanTag(html, lt + 2);
    pos = tag.end;
    const href = tag.href;
    if (!href) continue;
    const url = decodeHTMLAttribute(href.raw).trim();
    if (!HTTP_URL.test(url) || Buffer.byteLength(url) > MAX_TRACKED_URL_BYTES || urls.keep(url)) continue;
    out.push(html.slice(copied, href.start), `"${escapeAttribute(urls.click(url))}"`);
    copied = href.end;
  }
  out.push(html.slice(copied));
  return withPixel(out.join(''), urls.open);
}

function isAnchorStart(html: string, lt: number): boolean {
  const name = html.charCodeAt(lt + 1) | 0x20; // ASCII lower case
  return name === 0x61 && (WHITESPACE.has(html[lt + 2]) || html[lt + 2] === '>' || html[lt + 2] === '/');
}

/**
 * The attributes of a tag from `from` (just after its name) to its `>`: the position after the tag and
 * the first `href`. Quoted values may hold `>`; a quote that never closes ends the scan (the rest of
 * the document is that value, as for a browser).
 */
function scanTag(html: string, from: number): { end: number; href: Href | null } {
  let pos = from;
  let href: Href | null = null;
  while (pos < html.length) {
    while (pos < html.length && (WHITESPACE.has(html[pos]) || html[pos] === '/')) pos += 1;
    if (pos >= html.length || html[pos] === '>') return { end: pos + 1, href };
    const nameStart = pos;
    while (pos < html.length && !WHITESPACE.has(html[pos]) && !'=>/'.includes(html[pos])) pos += 1;
    const name = html.slice(nameStart, pos).toLowerCase();
    while (pos < html.length && WHITESPACE.has(html[pos])) pos += 1;
    if (html[pos] !== '=') continue;
    pos += 1;
    while (pos < html.length && WHITESPACE.has(html[pos])) pos += 1;
    const valueStart = pos;
    let raw: string;
    const quote = html[pos];
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, pos + 1);
      if (close < 0) return { end: html.length, href };
      raw = html.slice(pos + 1, close);
      pos = close + 1;
    } else {
      while (pos < html.length && !WHITESPACE.has(html[pos]) && html[pos] !== '>') pos += 1;
      raw = html.slice(valueStart, pos);
    }
    if (name === 'href' && !href) href = { start: valueStart, end: pos, raw };
  }
  return { end: html.length, href };
}

/** The 1x1 pixel, before the last `</body>` when there is one, else at the end. */
function withPixel(html: string, openUrl: string): string {
  const pixel =
    `<img src="${escapeAttribute(openUrl)}" width="1" height="1" alt="" ` +
    'style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">';
  const body = lastIndexOfCaseless(html, '</body');
  return body < 0 ? html + pixel : html.slice(0, body) + pixel + html.slice(body);
}

function lastIndexOfCaseless(text: string, needle: string): number {
  for (let at = text.lastIndexOf('<'); at >= 0; at = at === 0 ? -1 : text.lastIndexOf('<', at - 1)) {
    if (text.slice(at, at + needle.length).toLowerCase() === needle) return at;
  }
  return -1;
}
