/**
 * Template placeholders (decisions.md "Mail"): `{{name}}`, `{{ name }}`, dotted paths
 * `{{user.firstName}}` and `{{ name ?? fallback text }}` (the fallback is literal text up to `}}`,
 * optionally quoted with "..." or '...'). Names are segments of letters, digits, `_` and `-`, joined
 * by dots.
 *
 * Everything here is a single left-to-right scan with `indexOf` (no backtracking regex over the
 * source): a 512 KB body renders in linear time whatever its content.
 */

const NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
/** Placeholder names are short; longer ones are rejected before the regex runs. */
const MAX_NAME_LENGTH = 200;
/** `placeholderProblems` stops after this many: enough to fix a template, bounded for error bodies. */
const MAX_PROBLEMS = 10;

const OPEN = '{{';
const CLOSE = '}}';
const FALLBACK = '??';

export interface RenderOptions {
  /** HTML-escape substituted values (bodies); subjects and plain text are rendered raw. */
  escapeHtml: boolean;
}

type Token =
  | { kind: 'text'; text: string }
  | { kind: 'placeholder'; path: string[]; fallback: string | null; start: number }
  | { kind: 'invalid'; raw: string; start: number; problem: 'empty' | 'name' }
  | { kind: 'unclosed'; raw: string; start: number };

/** Splits a source into text and placeholders, in order. Linear in the length of the source. */
function* tokenize(source: string): Generator<Token> {
  let pos = 0;
  while (pos < source.length) {
    const open = source.indexOf(OPEN, pos);
    if (open < 0) break;
    if (open > pos) yield { kind: 'text', text: source.slice(pos, open) };
    const close = source.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) {
      yield { kind: 'unclosed', raw: source.slice(open), start: open };
      return;
    }
    yield parsePlaceholder(source.slice(open + OPEN.length, close), source.slice(open, close + CLOSE.length), open);
    pos = close + CLOSE.length;
  }
  if (pos < source.length) yield { kind: 'text', text: source.slice(pos) };
}

function parsePlaceholder(inner: string, raw: string, start: number): Token {
  const split = inner.indexOf(FALLBACK);
  const name = (split < 0 ? inner : inner.slice(0, split)).trim();
  if (name === '') return { kind: 'invalid', raw, start, problem: 'empty' };
  if (name.length > MAX_NAME_LENGTH || !NAME.test(name)) return { kind: 'invalid', raw, start, problem: 'name' };
  const fallback = split < 0 ? null : unquote(inner.slice(split + FALLBACK.length).trim());
  return { kind: 'placeholder', path: name.split('.'), fallback, start };
}

/** `"text"` and `'text'` lose their quotes; anything else is taken as written. */
function unquote(text: string): string {
  const first = text[0];
  if (text.length >= 2 && (first === '"' || first === "'") && text[text.length - 1] === first) return text.slice(1, -1);
  return text;
}

/** Own properties only: `{{constructor}}` must not reach Object.prototype. */
function lookupPath(variables: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = variables;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function valueToText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'object' && value !== null) return JSON.stringify(value) ?? '';
  return '';
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * Replaces every placeholder with its variable. A missing, null or undefined value renders the
 * fallback (as written: it is template text, so it is not escaped) or nothing. With `escapeHtml` the
 * substituted value is escaped, never the template around it. Malformed placeholders (which template
 * validation rejects) are left in the output as written.
 */
export function renderTemplate(source: string, variables: Record<string, unknown>, options: RenderOptions): string {
  const parts: string[] = [];
  for (const token of tokenize(source)) {
    if (token.kind === 'text') parts.push(token.text);
    else if (token.kind !== 'placeholder') parts.push(token.raw);
    else {
      const value = lookupPath(variables, token.path);
      if (value === undefined || value === null) parts.push(token.fallback ?? '');
      else parts.push(options.escapeHtml ? escapeHtml(valueToText(value)) : valueToText(value));
    }
  }
  return parts.join('');
}

export interface SizeOptions extends RenderOptions {
  /** `utf8`: bytes of UTF-8 (bodies); `utf16`: the string length, what `MaxLength` counts (subjects). */
  unit: 'utf8' | 'utf16';
  /** Counting stops as soon as the size passes this; the answer is then some size above it. */
  limit: number;
}

/** What HTML escaping adds to `text`: each escape replaces one ASCII character (`&` → `&amp;`: 4 more). */
function escapeGrowth(text: string): number {
  let growth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 38 || c === 39)
      growth += 4; // & → &amp;   ' → &#39;
    else if (c === 60 || c === 62)
      growth += 3; // < → &lt;   > → &gt;
    else if (c === 34) growth += 5; // " → &quot;
  }
  return growth;
}

/**
 * The size of `renderTemplate(source, variables, options)` without building it, so a request whose
 * placeholders multiply (500 KB of `{{x}}` with a 60 KB `x`: 6 GB) can be refused before anything is
 * rendered. Linear in the source plus the values measured, which stop at the limit.
 */
export function renderedSize(source: string, variables: Record<string, unknown>, options: SizeOptions): number {
  const measure = options.unit === 'utf8' ? (text: string) => Buffer.byteLength(text, 'utf8') : (text: string) => text.length;
  let size = 0;
  for (const token of tokenize(source)) {
    if (token.kind === 'text') size += measure(token.text);
    else if (token.kind !== 'placeholder') size += measure(token.raw);
    else {
      const value = lookupPath(variables, token.path);
      if (value === undefined || value === null) size += measure(token.fallback ?? '');
      else {
        const text = valueToText(value);
        size += measure(text) + (options.escapeHtml ? escapeGrowth(text) : 0);
      }
    }
    if (size > options.limit) return size;
  }
  return size;
}

/** Shortened for messages: a 512 KB unclosed tail should not end up in an error body. */
function excerpt(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}...` : raw);
}

/**
 * Human-readable problems of the source's placeholders (at most 10), each with its line and column;
 * empty when every placeholder is well formed.
 */
export function placeholderProblems(source: string): string[] {
  const problems: string[] = [];
  // Line numbers are counted incrementally from the previous problem: still one pass over the source.
  let line = 1;
  let lineStart = 0;
  let counted = 0;
  for (const token of tokenize(source)) {
    if (token.kind === 'text' || token.kind === 'placeholder') continue;
    for (; counted < token.start; counted += 1) {
      if (source.charCodeAt(counted) === 10) {
        line += 1;
        lineStart = counted + 1;
      }
    }
    const where = `at line ${line}, column ${token.start - lineStart + 1}`;
    if (token.kind === 'unclosed') problems.push(`unclosed placeholder ${excerpt(token.raw)} ${where}: "{{" without "}}"`);
    else if (token.problem === 'empty') problems.push(`empty placeholder ${excerpt(token.raw)} ${where}`);
    else {
      problems.push(
        `invalid placeholder name in ${excerpt(token.raw)} ${where}: use letters, digits, "_" and "-", with dots between segments`,
      );
    }
    if (problems.length >= MAX_PROBLEMS) break;
  }
  return problems;
}
