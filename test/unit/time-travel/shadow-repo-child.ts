// Runs one restore in its own process, for the crash test in shadow-repo.test.ts (which sets
// FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES so that it dies half way).
import { CheckpointStore } from '../../../src/time-travel/shadow-repo.js';

const [home, workspace, conversationId, commit, rewindId] = process.argv.slice(2) as [string, string, string, string, string];
const killAfterWrites = Number(process.env.FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES) || 0;
const repo = await new CheckpointStore({ home, env: process.env, killAfterWrites }).open(workspace);
const result = await repo.restore(conversationId, commit, rewindId);
process.stdout.write(JSON.stringify(result));
