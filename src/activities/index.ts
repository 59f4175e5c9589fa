// All activities, built from the worker's environment (where the secrets are).
import os from 'node:os';
import path from 'node:path';
import { ModelClients } from '../llm/client.js';
import { createCallModel } from './call-model.js';
import { createCondense } from './condense.js';
import { createEditFile } from './edit-file.js';
import { createRunTerminal } from './run-terminal.js';

export function faheemHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.FAHEEM_HOME || path.join(os.homedir(), '.faheem');
}

export function createActivities(env: NodeJS.ProcessEnv = process.env) {
  const home = faheemHome(env);
  const models = new ModelClients(env);
  return {
    callModel: createCallModel(env, models),
    condense: createCondense(env, models),
    runTerminal: createRunTerminal(env, home),
    editFile: createEditFile(env, home),
  };
}

export type Activities = ReturnType<typeof createActivities>;
