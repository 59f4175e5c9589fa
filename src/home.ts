// Where faheem keeps its files beside a worker or client: undo history, full outputs, payloads.
import os from 'node:os';
import path from 'node:path';

export function faheemHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.FAHEEM_HOME || path.join(os.homedir(), '.faheem');
}
