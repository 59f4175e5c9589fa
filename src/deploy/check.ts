// `faheem deploy check`: the gate before `set-current`. Replays the histories of the server's recent
// conversations (open ones first, every run of each chain) — or a folder of recorded histories — against
// this build's workflow code; a history that would break is named with the nondeterminism found.
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { liveStreamId } from '../live/stream-id.js';
import { DROP_CHANGES } from '../live/change-notifier.js';
import { workflowSource } from '../worker/workflow-source.js';
import type { DataConverter } from '@temporalio/common';
import type { DeploySettings } from '../settings/deploy.js';

/** One history to replay: the workflow id matters (sub-agents' ids derive from it). */
export interface HistoryToCheck {
  workflowId: string;
  /** Where it came from: the run id on the server, or the file name. */
  source: string;
  history: unknown;
}

/** One history that would break on this build. */
export interface CheckFailure {
  workflowId: string;
  source: string;
  /** The nondeterminism (or other replay failure) the SDK reported. */
  reason: string;
}

/** What a check found. */
export interface CheckResult {
  checked: number;
  failures: CheckFailure[];
}

/** The workflow ids of the server's recent conversations: open ones first, then the most recently closed. */
export async function recentConversationIds(client: Client, limit: number): Promise<string[]> {
  const ids: string[] = [];
  const queries = [
    `WorkflowType = 'conversation' AND ExecutionStatus = 'Running'`,
    `WorkflowType = 'conversation' AND ExecutionStatus != 'Running'`,
  ];
  for (const query of queries) {
    for await (const wf of client.workflow.list({ query })) {
      if (ids.length >= limit) return ids;
      if (!ids.includes(wf.workflowId)) ids.push(wf.workflowId);
    }
  }
  return ids;
}

/**
 * Every run of each conversation (the whole continue-as-new chain), oldest first, with its history; then
 * those of its live stream (`<id>::live`), a workflow of the same build that a deploy could break too.
 */
export async function* serverHistories(client: Client, ids: readonly string[]): AsyncGenerator<HistoryToCheck> {
  for (const id of ids.flatMap((c) => [c, liveStreamId(c)])) {
    const runs: { runId: string; start: number }[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${id.replace(/'/g, "\\'")}'` })) {
      runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
    }
    runs.sort((a, b) => a.start - b.start);
    for (const { runId } of runs) {
      const history = await client.workflow.getHandle(id, runId).fetchHistory();
      yield { workflowId: id, source: `run ${runId}`, history };
    }
  }
}

/**
 * Recorded histories in a folder (`test/histories/`): files `<name>--<workflow id>[@<run id>].json`
 * in the proto JSON that `temporal workflow show -o json` writes.
 */
export async function folderHistories(dir: string): Promise<HistoryToCheck[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (f) => ({
      workflowId: workflowIdOfFile(f),
      source: f,
      history: JSON.parse(await readFile(path.join(dir, f), 'utf8')) as unknown,
    })),
  );
}

/** `hooks-s8--conv-1@<run id>.json` → `conv-1`. */
export function workflowIdOfFile(file: string): string {
  const base = file.replace(/\.json$/, '');
  const at = base.indexOf('--');
  return (at < 0 ? base : base.slice(at + 2)).replace(/@[0-9a-f-]{36}$/, '');
}

/** The first line of a replay error that says what differed (the SDK's messages are long). */
export function failureReason(err: Error): string {
  const text = err.message || String(err);
  const first = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return first.length > 500 ? `${first.slice(0, 500)}…` : first;
}

/**
 * Replays each history against this build's workflow code (FAHEEM_WORKFLOW_BUNDLE, else the package's
 * prebuilt bundle, else the sources); payloads are decoded by `with.dataConverter`, as a worker
 * would (FAHEEM_ENCRYPTION_KEY…).
 */
export async function checkHistories(
  histories: AsyncIterable<HistoryToCheck> | Iterable<HistoryToCheck>,
  with_: Pick<DeploySettings, 'workflowBundle'> & { dataConverter: DataConverter },
): Promise<CheckResult> {
  const sources = new Map<string, string[]>();
  async function* feed() {
    for await (const h of histories) {
      sources.set(h.workflowId, [...(sources.get(h.workflowId) ?? []), h.source]);
      yield { workflowId: h.workflowId, history: h.history as never };
    }
  }
  const failures: CheckFailure[] = [];
  let checked = 0;
  const seen = new Map<string, number>();
  for await (const result of Worker.runReplayHistories(
    { ...workflowSource(with_), dataConverter: with_.dataConverter, replayName: 'faheem-deploy-check', sinks: DROP_CHANGES },
    feed(),
  )) {
    const n = seen.get(result.workflowId) ?? 0;
    seen.set(result.workflowId, n + 1);
    checked++;
    if (result.error) {
      failures.push({
        workflowId: result.workflowId,
        source: sources.get(result.workflowId)?.[n] ?? result.runId,
        reason: failureReason(result.error),
      });
    }
  }
  return { checked, failures };
}
