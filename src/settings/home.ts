// FAHEEM_HOME: where faheem keeps its files beside a worker or client (undo history, full outputs,
// payloads, checkpoints, the compile cache). No zod here (the quick paths load it).
import os from 'node:os';
import path from 'node:path';
import type { Settings } from '../environment.js';

/** FAHEEM_HOME, else `~/.faheem`. */
export function faheemHome(settings: Settings): string {
  return settings.FAHEEM_HOME || path.join(os.homedir(), '.faheem');
}
