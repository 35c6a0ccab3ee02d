import { decodeHTML, decodeHTMLAttribute } from 'entities';

/**
 * The plain-text alternative of an HTML body: spam filters score HTML-only mail down, and text-only
 * clients show something readable. Words and their order are kept, whitespace collapses as a browser
 * collapses it, block elements become paragraphs, `<br>` a line break, list items `- ` lines, links
 * `label (href)`; scripts, styles, the head and comments go; entities are decoded (the `entities`
 * package: every HTML5 named and numeric reference).
 *
 * Linear in the length of the HTML whatever it contains, because the worker runs this for every
 * email and one slow body delays every project's mail behind it. Hence one left-to-right scan with
 * `indexOf`, each character looked at a bounded number of times, and no DOM: regex passes over the
 * whole body went quadratic on runs of spaces, and the DOM parsers behind html-to-text (htmlparser2)
 * do on deep nesting and on unmatched closing tags (`stack.unshift`/`indexOf` per tag: 14 s for
 * 560 KB of `<b>…</i>` here).
 */
export function htmlToText(html: string): string {
  const scan = new HtmlScan(html);
  const out = new TextWriter();
  let link: { href: string; start: number } | null = null;
  for (let item = scan.next(); item; item = scan.next()) {
    if (item.kind === 'text') {
      out.text(decodeHTML(item.text));
      continue;
    }
    const { name, closing } = item;
    if (name === 'a') {
      if (link) out.endLink(link);
      link = closing ? null : { href: hrefOf(item.tag), start: out.mark() };
    } else if (name === 'br') out.lineBreak();
    else if (name === 'li' && !closing) out.listItem();
    else if (name === 'td' || name === 'th') out.space();
    else if (LINE_ELEMENTS.has(name)) out.lineBreak(true);
    else if (BLOCK_ELEMENTS.has(name)) out.paragraph();
  }
  if (link) out.endLink(link);
  return out.toString();
}

/** Elements that start a new paragraph (a blank line) where they open and close. */
const BLOCK_ELEMENTS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'center',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'html',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'ul',
]);
/** Elements that start a new line without a blank line. */
const LINE_ELEMENTS = new Set(['li', 'tr', 'caption', 'tbody', 'thead', 'tfoot']);
/** Elements whose content is not text a reader sees: skipped up to their closing tag. */
const HIDDEN_ELEMENTS = new Set(['head', 'script', 'style', 'template', 'title', 'noscript', 'object', 'svg', 'iframe']);

/**
 * The first `href` of a tag. Linear: the only attempts that scan far are at an `href=` whose quote
 * never closes, and at most one such attempt per quote kind can fail (a later quote would close it).
 */
const HREF = /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i;

function hrefOf(tag: string): string {
  const match = HREF.exec(tag);
  const raw = match ? (match[1] ?? match[2] ?? match[3]) : '';
  return decodeHTMLAttribute(raw).trim();
}

type ScanItem = { kind: 'text'; text: string } | { kind: 'tag'; name: string; closing: boolean; tag: string };

/** Splits HTML into text runs and tags (name, closing or not, the tag's source), skipping comments and hidden elements. */
class HtmlScan {
  private pos = 0;
  /** Same indexes as the source (only ASCII letters change): case-insensitive searches for closing tags. */
  private readonly lower: string;

  constructor(private readonly html: string) {
    this.lower = html.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  }

  next(): ScanItem | null {
    const { html } = this;
    while (this.pos < html.length) {
      const lt = html.indexOf('<', this.pos);
      if (lt !== this.pos) {
        const end = lt < 0 ? html.length : lt;
        const text = html.slice(this.pos, end);
        this.pos = end;
        return { kind: 'text', text };
      }
      const item = this.markup(lt);
      if (item) return item;
    }
    return null;
  }

  /** The markup at `lt` (a `<`); advances past it. Null for a comment or declaration (nothing to show). */
  private markup(lt: number): ScanItem | null {
    const { html, lower } = this;
    if (html.startsWith('<!--', lt)) {
      this.pos = this.after(lower.indexOf('-->', lt + 4), 3);
      return null;
    }
    const closing = html[lt + 1] === '/';
    const nameStart = closing ? lt + 2 : lt + 1;
    const first = lower.charCodeAt(nameStart);
    const isName = first >= 97 && first <= 122; // a-z
    if (!isName && (html[lt + 1] === '!' || html[lt + 1] === '?' || closing)) {
      this.pos = this.after(html.indexOf('>', lt), 1); // <!DOCTYPE>, <?xml?>, `</ >`
      return null;
    }
    if (!isName) {
      this.pos = lt + 1; // a `<` that starts no tag is text, as a browser reads it
      return { kind: 'text', text: '<' };
    }
    const gt = html.indexOf('>', lt);
    // No `>` anywhere after: an unterminated tag swallows the rest, as in a browser. Never rescanned.
    this.pos = this.after(gt, 1);
    if (gt < 0) return null;
    let nameEnd = nameStart + 1;
    while (nameEnd < gt && /[a-z0-9-]/.test(lower[nameEnd])) nameEnd += 1;
    const name = lower.slice(nameStart, nameEnd);
    if (!closing && HIDDEN_ELEMENTS.has(name) && html[gt - 1] !== '/') {
      const close = lower.indexOf(`</${name}`, gt);
      this.pos = close < 0 ? html.length : this.after(html.indexOf('>', close), 1);
      return null;
    }
    return { kind: 'tag', name, closing, tag: html.slice(lt, gt) };
  }

  /** The position after a match of `length` at `index`, or the end when there was none. */
  private after(index: number, length: number): number {
    return index < 0 ? this.html.length : index + length;
  }
}

/**
 * Collects words with the whitespace between them decided lazily: a pending space or line breaks are
 * written only before the next word, so runs of tags and spaces never pile up blank lines and
 * nothing needs trimming afterwards.
 */
class TextWriter {
  private readonly parts: string[] = [];
  private pendingSpace = false;
  private pendingBreaks = 0;

  text(text: string): void {
    const words = text.split(/[ \t\n\f\r]+/);
    words.forEach((word, i) => {
      if (i > 0) this.space();
      if (word) this.word(word);
    });
  }

  space(): void {
    this.pendingSpace = true;
  }

  lineBreak(atMostOne = false): void {
    this.pendingBreaks = atMostOne ? Math.max(this.pendingBreaks, 1) : Math.min(this.pendingBreaks + 1, 2);
  }

  paragraph(): void {
    this.pendingBreaks = 2;
  }

  listItem(): void {
    this.lineBreak(true);
    this.word('-');
    this.space();
  }

  /** Where a link's label starts. */
  mark(): number {
    return this.parts.length;
  }

  /** Appends ` (href)` after the label, unless the label says it already (or the link goes nowhere useful). */
  endLink(link: { href: string; start: number }): void {
    const { href } = link;
    if (!href || href.startsWith('#') || /^javascript:/i.test(href)) return;
    const label = this.parts.slice(link.start).join('').trim();
    if (label === href || `mailto:${label}` === href) return;
    if (label) this.space();
    this.word(label ? `(${href})` : href);
  }

  private word(word: string): void {
    if (this.parts.length > 0) {
      if (this.pendingBreaks > 0) this.parts.push('\n'.repeat(this.pendingBreaks));
      else if (this.pendingSpace) this.parts.push(' ');
    }
    this.parts.push(word);
    this.pendingSpace = false;
    this.pendingBreaks = 0;
  }

  toString(): string {
    return this.parts.join('');
  }
}
