// Where faheem keeps its files beside a worker or client: undo history, full outputs, payloads.
import os from 'node:os';
import path from 'node:path';
import type { Settings } from './environment.js';

/** FAHEEM_HOME, else `~/.faheem`. */
export function faheemHome(env: Settings): string {
  return env.FAHEEM_HOME || path.join(os.homedir(), '.faheem');
}
