import { describe, expect, it } from '@jest/globals';
import { escapeHtml, placeholderProblems, renderTemplate } from '../src/modules/templates/template-rendering.js';

const raw = { escapeHtml: false };
const html = { escapeHtml: true };

describe('renderTemplate', () => {
  it('replaces every placeholder form: bare, spaced, dotted, repeated', () => {
    const vars = { name: 'Ada', user: { firstName: 'Ada', address: { city: 'London' } }, plan: 'pro' };
    expect(renderTemplate('Hi {{name}}!', vars, raw)).toBe('Hi Ada!');
    expect(renderTemplate('Hi {{ name }} / {{  name}}', vars, raw)).toBe('Hi Ada / Ada');
    expect(renderTemplate('{{user.firstName}} from {{ user.address.city }}', vars, raw)).toBe('Ada from London');
    expect(renderTemplate('{{plan}}{{plan}}', vars, raw)).toBe('propro');
    expect(renderTemplate('no placeholders { here } {x}', vars, raw)).toBe('no placeholders { here } {x}');
    expect(renderTemplate('', vars, raw)).toBe('');
  });

  it('names may hold digits, "_" and "-"; dotted paths walk arrays too', () => {
    const vars = { 'first-name': 'Ada', last_name: 'L', v2: 2, items: ['a', 'b'] };
    expect(renderTemplate('{{first-name}} {{last_name}} {{v2}} {{items.1}}', vars, raw)).toBe('Ada L 2 b');
  });

  it('missing, null and undefined values render the fallback, or nothing', () => {
    const vars = { nothing: null, undef: undefined, empty: '', user: { name: null } };
    expect(renderTemplate('Hi {{ missing ?? friend }}!', vars, raw)).toBe('Hi friend!');
    expect(renderTemplate('Hi {{ nothing ?? there }}, {{ undef ?? you }}', vars, raw)).toBe('Hi there, you');
    expect(renderTemplate('Hi {{missing}}!', vars, raw)).toBe('Hi !');
    expect(renderTemplate('[{{ user.name ?? anon }}] [{{ user.none.deeper ?? x }}]', vars, raw)).toBe('[anon] [x]');
    // An empty string is a value: no fallback.
    expect(renderTemplate('[{{ empty ?? fallback }}]', vars, raw)).toBe('[]');
  });

  it('fallbacks: literal text up to "}}", trimmed, optionally quoted', () => {
    expect(renderTemplate('{{ a ?? dear customer }}', {}, raw)).toBe('dear customer');
    expect(renderTemplate('{{ a ?? "  spaced  " }}', {}, raw)).toBe('  spaced  ');
    expect(renderTemplate("{{ a ?? 'single' }}", {}, raw)).toBe('single');
    expect(renderTemplate('{{ a ?? "mismatched\' }}', {}, raw)).toBe('"mismatched\'');
    expect(renderTemplate('{{ a ?? }}', {}, raw)).toBe('');
    expect(renderTemplate('{{ a ?? x ?? y }}', {}, raw)).toBe('x ?? y');
    expect(renderTemplate('{{a??b}}', {}, raw)).toBe('b');
  });

  it('non-string primitives through String(), objects and arrays as JSON', () => {
    const vars = { n: 42, f: 1.5, t: true, no: false, zero: 0, obj: { a: 1 }, list: [1, 'x'] };
    expect(renderTemplate('{{n}} {{f}} {{t}} {{no}} {{zero ?? z}}', vars, raw)).toBe('42 1.5 true false 0');
    expect(renderTemplate('{{obj}} {{list}}', vars, raw)).toBe('{"a":1} [1,"x"]');
  });

  it('escapeHtml escapes the substituted value, never the template or the fallback', () => {
    const vars = { name: `<b>"Tom" & 'Jerry'</b>`, obj: { html: '<i>' } };
    expect(renderTemplate('<p title="x">{{name}}</p>', vars, html)).toBe(
      '<p title="x">&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;</p>',
    );
    expect(renderTemplate('<p>{{ missing ?? <em>friend</em> }}</p>', vars, html)).toBe('<p><em>friend</em></p>');
    expect(renderTemplate('{{obj}}', vars, html)).toBe('{&quot;html&quot;:&quot;&lt;i&gt;&quot;}');
    expect(renderTemplate('{{name}}', vars, raw)).toBe(vars.name);
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });

  it('only own properties: prototype members render empty', () => {
    expect(renderTemplate('[{{constructor}}][{{ toString ?? none }}][{{a.__proto__}}]', { a: {} }, raw)).toBe('[][none][]');
  });

  it('a value that looks like a placeholder is not rendered again', () => {
    expect(renderTemplate('{{a}}', { a: '{{b}}', b: 'no' }, raw)).toBe('{{b}}');
  });

  it('malformed placeholders are left as written', () => {
    expect(renderTemplate('a {{ }} b {{bad name}} c {{ok}} {{ unclosed', { ok: 'OK' }, raw)).toBe(
      'a {{ }} b {{bad name}} c OK {{ unclosed',
    );
  });

  it('a 512 KB body with thousands of placeholders renders in one linear pass', () => {
    const chunk = '<p>Hello {{ user.name ?? friend }}, your code is {{code}}.</p>\n';
    const body = chunk.repeat(Math.floor((512 * 1024) / chunk.length));
    const out = renderTemplate(body, { user: { name: 'Ada' }, code: 7 }, html);
    expect(out).not.toContain('{{');
    expect(out.split('Hello Ada, your code is 7.').length - 1).toBe(Math.floor((512 * 1024) / chunk.length));
    // Adversarial inputs for a backtracking matcher: many openers, never closed / never valid.
    expect(renderTemplate('{{'.repeat(200_000), {}, raw)).toBe('{{'.repeat(200_000));
    expect(placeholderProblems(`{{ ${'a.'.repeat(100_000)}! }}`)).toHaveLength(1);
  });
});

describe('placeholderProblems', () => {
  it('is empty for well-formed placeholders and plain text', () => {
    for (const ok of ['', 'plain', '{{a}}', '{{ a.b.c }}', '{{ a-b_c.d1 ?? "x" }}', '{{a ?? }}', 'single { braces }', '}} stray closer']) {
      expect(placeholderProblems(ok)).toEqual([]);
    }
  });

  it('reports unclosed, empty and invalid names, with line and column', () => {
    expect(placeholderProblems('Hello {{ name')).toEqual(['unclosed placeholder "{{ name" at line 1, column 7: "{{" without "}}"']);
    expect(placeholderProblems('a\nbc {{ }}')).toEqual(['empty placeholder "{{ }}" at line 2, column 4']);
    expect(placeholderProblems('{{ ?? fallback }}')).toEqual(['empty placeholder "{{ ?? fallback }}" at line 1, column 1']);
    const invalid = (raw: string, col = 1) =>
      `invalid placeholder name in ${JSON.stringify(raw)} at line 1, column ${col}: use letters, digits, "_" and "-", with dots between segments`;
    expect(placeholderProblems('{{first name}}')).toEqual([invalid('{{first name}}')]);
    expect(placeholderProblems('{{a..b}}')).toEqual([invalid('{{a..b}}')]);
    expect(placeholderProblems('{{.a}}')).toEqual([invalid('{{.a}}')]);
    expect(placeholderProblems('{{a.}}')).toEqual([invalid('{{a.}}')]);
    expect(placeholderProblems('{{{a}}}')).toEqual([invalid('{{{a}}')]);
    expect(placeholderProblems('x {{na$me}}')).toEqual([invalid('{{na$me}}', 3)]);
  });

  it('lists several problems in order, at most 10, and shortens long excerpts', () => {
    expect(placeholderProblems('{{}} ok {{a}}\n{{ b c }} {{ d')).toEqual([
      'empty placeholder "{{}}" at line 1, column 1',
      'invalid placeholder name in "{{ b c }}" at line 2, column 1: use letters, digits, "_" and "-", with dots between segments',
      'unclosed placeholder "{{ d" at line 2, column 11: "{{" without "}}"',
    ]);
    expect(placeholderProblems('{{ }}'.repeat(50))).toHaveLength(10);
    const [long] = placeholderProblems(`{{ ${'x'.repeat(1000)}`);
    expect(long).toBe(`unclosed placeholder "{{ ${'x'.repeat(37)}..." at line 1, column 1: "{{" without "}}"`);
  });
});
