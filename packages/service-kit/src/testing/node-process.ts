import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';

export interface NodeProcess {
  name: string;
  child: ChildProcess;
  /** Everything it printed so far (for failure messages). */
  output(): string;
  /** Resolves once the process printed its ready line; rejects if it exits first. */
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) unless it already exited, and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface NodeProcessOptions {
  /** A compiled entry (`dist/worker.js`, `dist/main.js`): what `npm start` runs, not the sources. */
  entry: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Text of the log line that says the process is ready (it must log at info level or lower). */
  readyWhen: string;
  /** Named in the error when the entry is missing (`npm run build -w mail-api`). */
  buildHint: string;
}

/**
 * Starts a compiled app entry as a real child process on the Node running the tests: its own event
 * loop, connections and signal handling, so tests can send it SIGTERM or SIGKILL. Its output is kept
 * in memory, not printed.
 */
export function startNodeProcess(name: string, options: NodeProcessOptions): NodeProcess {
  if (!existsSync(options.entry)) throw new Error(`${options.entry} is missing: run ${options.buildHint} first`);
  const child = spawn(process.execPath, [options.entry], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const onChunk = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes(options.readyWhen)) markReady();
  };
  child.stdout.on('data', onChunk);
  child.stderr.on('data', onChunk);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // Settled once: by the ready line, or by an exit before it (never an unhandled rejection later).
  const readyOrExit = new Promise<void>((resolve, reject) => {
    void ready.then(resolve);
    void exited.then(({ code, signal }) => reject(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${output}`)));
  });
  return {
    name,
    child,
    output: () => output,
    ready: readyOrExit,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Whether a new connection to the server at `baseUrl` is refused: true once it closed its listener
 * (after SIGTERM), false while it still accepts (a `/healthz` request is answered).
 */
export function connectionRefused(baseUrl: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(new URL('/healthz', baseUrl), { agent: false }, (res) => {
      res.resume();
      resolve(false);
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}
