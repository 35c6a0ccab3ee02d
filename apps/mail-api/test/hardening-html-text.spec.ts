import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { htmlToText } from '../src/modules/delivery/html-text.js';
import { insertVerifiedDomain, waitForStatus } from './support/delivery-fixtures.js';
import { bearer, createProject, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { startWorkerProcess, workerEnv, type WorkerProcess } from './support/worker-process.js';

const DOMAIN = 'text.example.com';
const OTHER_DOMAIN = 'other-project.example.com';
const MAX_BODY_BYTES = 512 * 1024;

/**
 * Issue #11 item 11: the plain-text alternative is derived from the HTML in the delivery worker, so
 * a converter that goes quadratic on a crafted body stalls every project's email behind it. The
 * worker runs as its own process (`dist/worker.js`) so a stalled worker makes the wait below time
 * out instead of freezing the test process.
 */
describe('HTML bodies: linear text conversion and the size cap', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let p: MailProjectCredentials;
  let other: MailProjectCredentials;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '1000' } });
    db = t.app.get(DataSource);
    p = await createProject(t, 'Crafted bodies');
    other = await createProject(t, 'Someone else');
    await insertVerifiedDomain(db, p.id, DOMAIN);
    await insertVerifiedDomain(db, other.id, OTHER_DOMAIN);
    worker = startWorkerProcess('text', workerEnv(t.config));
    await worker.ready;
  });
  afterAll(async () => {
    // SIGKILL: a worker stuck in a regex never gets to run its SIGTERM handler.
    await worker?.kill('SIGKILL');
    await t?.close();
    await sink?.close();
  });

  const send = (key: string, body: object) => request(t.url).post('/v1/send').set(bearer(key)).send(body);

  it('crafted bodies that made the old converter quadratic are delivered, and another project’s email behind them too', async () => {
    const crafted = [
      `a${' '.repeat(500_000)}b`, // the measured case: /[ \t]+\n/ retried from every space
      `${'<b>'.repeat(60_000)}${'</i>'.repeat(60_000)}`, // unmatched closing tags against a deep open stack
      '<a href="x" '.repeat(40_000), // anchors that never close, no `>` anywhere
      `${'<p>'.repeat(20_000)}${'&amp;'.repeat(20_000)}${'\t \n'.repeat(100_000)}`,
    ];
    const ids: string[] = [];
    for (const [i, body] of crafted.entries()) {
      const res = await send(p.secretKey, { to: `crafted-${i}@example.net`, from: `c@${DOMAIN}`, subject: `crafted ${i}`, body });
      expect(res.status).toBe(200);
      ids.push(res.body.data.emails[0].email);
    }
    const normal = await send(other.secretKey, {
      to: 'bystander@example.net',
      from: `n@${OTHER_DOMAIN}`,
      subject: 'hello',
      body: '<p>Hi</p>',
    }).expect(200);
    ids.push(normal.body.data.emails[0].email);

    // Generous: a few seconds at most here; the old converter needed minutes for the first body alone.
    const rows = await waitForStatus(db, ids, ['SENT', 'FAILED'], 45_000);
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'SENT'));

    const [spaces] = sink.messagesFor([ids[0]]);
    expect((await sink.parse(spaces)).text?.trim()).toBe('a b');
    const [bystander] = sink.messagesFor([ids[4]]);
    expect((await sink.parse(bystander)).text?.trim()).toBe('Hi');
  }, 90_000);

  it('a body over 512 KB of UTF-8 is refused at request time: 422 VALIDATION_ERROR, nothing written', async () => {
    const before = await db.query('SELECT count(*)::int AS n FROM emails');
    // 180,000 characters, 540,000 bytes: under a character cap of 512 K, over the byte cap.
    const res = await send(p.secretKey, { to: 'big@example.net', from: `c@${DOMAIN}`, subject: 'big', body: '€'.repeat(180_000) });
    expectValidationError(res, [{ field: 'body', code: 'maxByteLength', message: /512 KB/ }]);
    expect(await db.query('SELECT count(*)::int AS n FROM emails')).toEqual(before);
  });

  it('a body of exactly 512 KB is accepted', async () => {
    await send(p.secretKey, { to: 'edge@example.net', from: `c@${DOMAIN}`, subject: 'edge', body: 'x'.repeat(MAX_BODY_BYTES) }).expect(200);
  });

  describe('the text it produces', () => {
    it('keeps words, paragraphs, list items, links and decoded entities; drops scripts, styles and comments', () => {
      const html = [
        '<html><head><title>T</title><style>p { color: red }</style></head><body>',
        '<h1>Hello &amp; welcome</h1>',
        '<p>See   <a href="https://example.com/r?a=1&amp;b=2">the report</a>.<br>Next line</p>',
        '<!-- a comment with <p>markup</p> -->',
        '<ul><li>one</li><li>two &hellip;</li></ul>',
        '<script>alert("x")</script><SCRIPT type="x">no</SCRIPT>',
        '<p><a href="https://example.com/same">https://example.com/same</a> <a href="#top">top</a></p>',
        '<p>caf&eacute; &#233; &#xE9; &copy 1 &lt;b&gt; &unknown;</p>',
        '</body></html>',
      ].join('\n');
      expect(htmlToText(html)).toBe(
        [
          'Hello & welcome',
          '',
          'See the report (https://example.com/r?a=1&b=2).',
          'Next line',
          '',
          '- one',
          '- two …',
          '',
          'https://example.com/same top',
          '',
          'café é é © 1 <b> &unknown;',
        ].join('\n'),
      );
    });

    it('answers something sensible for broken markup', () => {
      expect(htmlToText('')).toBe('');
      expect(htmlToText('plain text,   no tags')).toBe('plain text, no tags');
      expect(htmlToText('a < b and 3<4 <3')).toBe('a < b and 3<4 <3');
      expect(htmlToText('before <b unterminated tag')).toBe('before');
      expect(htmlToText('x <!-- never closed')).toBe('x');
      expect(htmlToText("<a href=unquoted>u</a> <A HREF='single'>s</A>")).toBe('u (unquoted) s (single)');
      expect(htmlToText('<a href="https://x.test"><img src="logo.png"></a>')).toBe('https://x.test');
      expect(htmlToText('<script>never closed <p>hidden')).toBe('');
    });
  });
});
