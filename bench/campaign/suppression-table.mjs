#!/usr/bin/env node
// Writes the suppression bench's figures into bench/README.md, between the markers
// `<!-- suppression-results:begin -->` and `<!-- suppression-results:end -->`, from the committed
// bench/results/campaign-suppression.json: the README never carries a figure typed by hand.
// `node bench/campaign/suppression-table.mjs` (bench/campaign/suppression.mjs runs it after each run).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const RESULTS_FILE = path.join(ROOT, 'bench', 'results', 'campaign-suppression.json');
const README = path.join(ROOT, 'bench', 'README.md');
const BEGIN = '<!-- suppression-results:begin -->';
const END = '<!-- suppression-results:end -->';

const verdict = (ok) => (ok ? 'met' : 'MISSED');
const load = (values) => (values ? values.map((v) => v.toFixed(1)).join(' / ') : 'not recorded');

/** The markdown block for a result file's contents. */
export function suppressionTable(result) {
  const { throughput: t, import: i } = result;
  const mb = Math.round(i.bytes / 1e6);
  const lines = [
    `Generated from \`bench/results/campaign-suppression.json\` (${result.generatedAt}): import run at commit ` +
      `${result.commit ?? '?'}${result.dirty ? ' (uncommitted changes)' : ''}, ${result.machine?.cpus ?? '?'} cores, load average ` +
      `(1 / 5 / 15 min) ${load(result.loadAverage?.atStart)} at the start and ${load(result.loadAverage?.atEnd)} at the end.`,
    '',
    '| figure | goal | measured | verdict |',
    '| --- | --- | --- | --- |',
    `| campaign throughput with ${t.suppressed} suppressed / without (same run, ${t.emails} emails each, ${t.workers} workers, ` +
      `rate lifted; ${t.generatedAt}${t.commit ? `, commit ${t.commit}` : ''}) | >= 0.95 | ${t.withSuppressions.emailsPerSecond}/s vs ` +
      `${t.without.emailsPerSecond}/s = **${t.ratio}** | ${verdict(t.ratio >= 0.95)} |`,
    `| CSV import of ${i.rows} rows (${mb} MB, \`POST /suppressions/import\`) | < 30 s | **${i.seconds} s** | ${verdict(i.seconds < 30)} |`,
    `| API peak RSS during that import | < 300 MB | **${i.apiPeakRssMb} MB** (${i.apiIdleRssMb} MB idle) | ${verdict(i.apiPeakRssMb < 300)} |`,
  ];
  return lines.join('\n');
}

export function writeSuppressionTable() {
  const result = JSON.parse(readFileSync(RESULTS_FILE, 'utf8'));
  const readme = readFileSync(README, 'utf8');
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`bench/README.md lacks the ${BEGIN} ... ${END} markers`);
  writeFileSync(README, `${readme.slice(0, start + BEGIN.length)}\n${suppressionTable(result)}\n${readme.slice(end)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeSuppressionTable();
  console.log('bench/README.md: suppression figures rewritten from bench/results/campaign-suppression.json');
}
