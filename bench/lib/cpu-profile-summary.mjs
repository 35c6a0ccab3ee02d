#!/usr/bin/env node
// Text summary of a V8 CPU profile (.cpuprofile, from bench/lib/cpu-profiler.mjs or `node --cpu-prof`):
// self time by function and by package, optionally within a time window, so a profile can be quoted in
// a note as text. CLI: `node bench/lib/cpu-profile-summary.mjs <file> [--top 15] [--from <us>] [--to <us>]`
// (`--from`/`--to`: CLOCK_MONOTONIC microseconds, the profile's own clock).
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PRELOAD = pathToFileURL(fileURLToPath(new URL('./cpu-profiler.mjs', import.meta.url))).href;

/**
 * The env of a process to profile (BENCH_CPU_PROF=<dir> in the benches): bench/lib/cpu-profiler.mjs
 * preloaded, its profile file `<dir>/<label>.cpuprofile`. Returns the env and the file.
 */
export function profiledEnv(env, dir, label) {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${label}.cpuprofile`);
  rmSync(file, { force: true });
  return { env: { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim(), BENCH_CPU_PROF_FILE: file }, file };
}

/** Asks a profiled child process for its profile (SIGUSR2) and returns it, parsed, once written. */
export async function takeProfile(child, file, timeoutMs = 60_000) {
  child.kill('SIGUSR2');
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  for (;;) {
    // Written in one writeFileSync: complete once its size stops changing and it parses.
    const size = existsSync(file) ? readFileSync(file).length : -1;
    if (size > 0 && size === last) {
      try {
        return JSON.parse(readFileSync(file, 'utf8'));
      } catch {
        // still being written
      }
    }
    if (Date.now() > deadline) throw new Error(`no CPU profile in ${file} after ${timeoutMs / 1000} s`);
    last = size;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** Where a frame's code lives: an npm package, a workspace, Node itself, or V8 (native, GC). */
export function packageOf(url, functionName) {
  if (!url) return SPECIAL.has(functionName) ? functionName : '(native)';
  if (url.startsWith('node:'))
    return (
      'node:' +
      url
        .slice(5)
        .replace(/^internal\//, '')
        .split('/')[0]
    );
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + 14).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  const workspace = /\/(apps|packages)\/([^/]+)\//.exec(url);
  if (workspace) return workspace[1] === 'apps' ? workspace[2] : `@app/${workspace[2]}`;
  return path.basename(url);
}

function frameLabel({ functionName, url, lineNumber }) {
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const short = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(apps|packages)\//, '');
  return `${name} ${short}:${lineNumber + 1}`;
}

/**
 * Self time of each function and package among the samples taken in [fromUs, toUs]. Shares are of
 * the busy samples (idle excluded), so they read as "of the CPU this process used".
 */
export function summarizeProfile(profile, { fromUs = -Infinity, toUs = Infinity, top = 10 } = {}) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map();
  const byPackage = new Map();
  let t = profile.startTime;
  let busy = 0;
  let idle = 0;
  let first = null;
  let last = null;
  for (let i = 0; i < profile.samples.length; i += 1) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0; // the sample stands for the time until the next one
    first ??= t;
    last = t;
    const frame = nodes.get(profile.samples[i]).callFrame;
    if (frame.functionName === '(idle)') {
      idle += dt;
      continue;
    }
    busy += dt;
    const label = frameLabel(frame);
    const pkg = packageOf(frame.url, frame.functionName);
    byFunction.set(label, { us: (byFunction.get(label)?.us ?? 0) + dt, pkg });
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
  }
  const share = (us) => (busy ? Math.round((us / busy) * 1000) / 10 : 0);
  const sorted = (map, value) => [...map.entries()].sort((a, b) => value(b[1]) - value(a[1])).slice(0, top);
  return {
    windowMs: first === null ? 0 : Math.round((last - first) / 1000),
    busyMs: Math.round(busy / 1000),
    idleMs: Math.round(idle / 1000),
    functions: sorted(byFunction, (v) => v.us).map(([fn, v]) => ({
      function: fn,
      package: v.pkg,
      selfMs: Math.round(v.us / 1000),
      pct: share(v.us),
    })),
    packages: sorted(byPackage, (v) => v).map(([pkg, us]) => ({ package: pkg, selfMs: Math.round(us / 1000), pct: share(us) })),
  };
}

/** The summary as text lines (what the benches print and a note can quote). */
export function formatSummary(title, summary) {
  const lines = [
    `cpu ${title}: ${summary.busyMs} ms busy, ${summary.idleMs} ms idle over ${summary.windowMs} ms`,
    '  self time by function:',
    ...summary.functions.map((f) => `    ${String(f.pct).padStart(5)}%  ${f.function}`),
    '  self time by package:',
    ...summary.packages.map((p) => `    ${String(p.pct).padStart(5)}%  ${p.package}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) {
    console.error('usage: cpu-profile-summary.mjs <file.cpuprofile> [--top N] [--from us] [--to us]');
    process.exit(2);
  }
  const opt = (name, fallback) => {
    const i = rest.indexOf(`--${name}`);
    return i >= 0 ? Number(rest[i + 1]) : fallback;
  };
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const summary = summarizeProfile(profile, { fromUs: opt('from', -Infinity), toUs: opt('to', Infinity), top: opt('top', 15) });
  console.log(formatSummary(path.basename(file), summary));
}
