// `faheem api` as a process for the e2e tests: started with the harness's environment, its URL read
// from the first line it prints, what it says on stderr kept (to check a warning, or that a token
// was never logged).
import { execa, type ResultPromise } from 'execa';
import path from 'node:path';
import { ROOT } from './harness.js';

/** A running `faheem api`. */
export interface ApiProcess {
  process: ResultPromise;
  /** The base URL it printed (`http://127.0.0.1:<port>`, or https with a certificate). */
  url: string;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** SIGTERM, then waits for it to end. */
  stop(): Promise<void>;
}

/** Starts `faheem api <args>` with `env` and resolves once it printed its URL (rejects if it exits first). */
export async function startApiProcess(args: string[], env: Record<string, string>): Promise<ApiProcess> {
  const process = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'api', ...args], { cwd: ROOT, env, reject: false });
  let stderr = '';
  process.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    process.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(line.trim());
    });
    void process.then((r) => reject(new Error(`faheem api exited (${r.exitCode}): ${r.stderr}`)));
  });
  return {
    process,
    url,
    stderr: () => stderr,
    stop: async () => {
      process.kill('SIGTERM');
      await process.catch(() => undefined);
    },
  };
}
