// The one port through which the conversation's state reaches Temporal: search attributes, the Web
// UI's details, the report to a parent. ConversationRun flushes a command's effects through it once,
// in the order the command gave them (upserts and signals are commands that replay checks); the
// details, which are not a command, are published once per flush. Unit tests pass a recording port.
import {
  getExternalWorkflowHandle,
  proxyActivities,
  proxySinks,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
  type Sinks,
} from '@temporalio/workflow';
import type { ChangeNotice } from '../../../live/stream-id.js';
import type { ChildReport, ConversationStatus } from '../../../core/types.js';
import type { WebhookActivities } from '../../../webhooks/deliver.js';
import { WEBHOOK_DELIVERY } from '../activity-options.js';
import { ConversationModelKey, ConversationStatusKey, childStatusSignal } from '../messages.js';
import { failedDelivery, type SendWebhook } from '../../../webhooks/workflow/webhooks.js';

/** What the run asks of Temporal (a recording stand-in in unit tests). */
export interface EffectsPort {
  /** The status search attribute (and, at a conversation's start, its model). */
  searchAttributes(values: { status: ConversationStatus; model?: string }): void;
  /** The Web UI's current details. */
  details(text: string): void;
  /** Tells the parent conversation this sub-agent's status and tree cost. */
  signalParent(parentId: string, report: ChildReport): void;
  /**
   * Tells the worker what the conversation now has, for its followers (no command, no history: a
   * sink, called only when the workflow runs live, never on replay).
   */
  changed?(notice: ChangeNotice): void;
  /**
   * Delivers a stop to the conversation's webhook (the deliverWebhook activity on the webhook
   * worker's queue) and says how it ended; never rejects. Absent: webhooks are not delivered.
   */
  deliverWebhook?: SendWebhook;
}

/** The worker's side of `changed` (src/live/change-notifier.ts registers it as CHANGE_SINK). */
export interface ChangeSinks extends Sinks {
  faheemChanges: { changed(notice: ChangeNotice): void };
}

const changeSink = proxySinks<ChangeSinks>().faheemChanges;

/** The port inside the workflow. */
export const temporalEffects: EffectsPort = {
  searchAttributes({ status, model }) {
    upsertSearchAttributes([
      { key: ConversationStatusKey, value: status },
      ...(model !== undefined ? [{ key: ConversationModelKey, value: model }] : []),
    ]);
  },
  details(text) {
    setCurrentDetails(text);
  },
  signalParent(parentId, report) {
    // The parent may have closed meanwhile: nothing to tell then.
    getExternalWorkflowHandle(parentId)
      .signal(childStatusSignal, report)
      .catch(() => undefined);
  },
  async deliverWebhook(taskQueue, request) {
    try {
      const result = await proxyActivities<WebhookActivities>({ ...WEBHOOK_DELIVERY, taskQueue }).deliverWebhook(request);
      return { delivered: true, attempts: result.attempts, statusCode: result.statusCode };
    } catch (err) {
      return failedDelivery(err, taskQueue);
    }
  },
  changed(notice) {
    // On replay the worker would drop the call anyway; not making it keeps replayers (deploy check)
    // from logging a sink they never registered.
    if (!workflowInfo().unsafe.isReplaying) changeSink.changed(notice);
  },
};
