// The conversation's activity proxies: model calls on the conversation's queue, tools on the
// workspace host's queue.
import { proxyActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { Activities } from '../../activities.js';
import { DEFAULTS, type ConversationOptions } from '../../../core/types.js';
import { MODEL_CALL, TOOL_CALL } from '../activity-options.js';

/** Activities as the workflow calls them. */
export type ActivityProxies = ActivityInterfaceFor<Activities>;

/** The two proxies a conversation uses. */
export interface ConversationActivities {
  /** callModel, condense: on the conversation's own task queue. */
  model: ActivityProxies;
  /** prepareTools, runTool, releaseTools, the checkpoint activities (and the legacy runTerminal / editFile): on the workspace host's queue. */
  tool: ActivityProxies;
}

export function conversationActivities(options: ConversationOptions): ConversationActivities {
  return {
    model: proxyActivities<Activities>(MODEL_CALL),
    tool: proxyActivities<Activities>({ ...TOOL_CALL, taskQueue: options.toolTaskQueue }),
  };
}

/** How long a call on the workspace host may wait for a worker there before the conversation says it waits for the host. */
export function hostWait(options: ConversationOptions): number {
  return options.hostWaitMs ?? DEFAULTS.hostWaitMs;
}

/** The options every call on the workspace host shares: its queue and the wait for a worker there. */
export function onHostQueue(options: ConversationOptions): { taskQueue: string; scheduleToStartTimeout: number } {
  return { taskQueue: options.toolTaskQueue, scheduleToStartTimeout: hostWait(options) };
}
