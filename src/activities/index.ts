// All activities, built from the worker's environment (where the secrets are).
import path from 'node:path';
import { TranscriptCache } from '../conversation/read-events.js';
import { faheemHome } from '../home.js';
import { ModelClients } from '../llm/client.js';
import { createCallModel } from './call-model.js';
import { createCondense } from './condense.js';
import { createEditFile } from './edit-file.js';
import { createRunTerminal } from './run-terminal.js';
import { StartLog } from './start-log.js';

export function createActivities(env: NodeJS.ProcessEnv = process.env) {
  const home = faheemHome(env);
  const models = new ModelClients(env);
  // Model calls and condensation read the same transcripts: one cache serves both.
  const transcripts = new TranscriptCache();
  const starts = new StartLog(path.join(home, 'started'));
  return {
    callModel: createCallModel(models, transcripts),
    condense: createCondense(models, transcripts),
    runTerminal: createRunTerminal(env, home, starts),
    editFile: createEditFile(env, home, starts),
  };
}

export type Activities = ReturnType<typeof createActivities>;
