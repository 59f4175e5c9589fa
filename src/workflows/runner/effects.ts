// The one port through which the conversation's state reaches Temporal: search attributes, the Web
// UI's details, the report to a parent. ConversationRun flushes a command's effects through it once,
// in the order the command gave them (upserts and signals are commands that replay checks); the
// details, which are not a command, are published once per flush. Unit tests pass a recording port.
import { getExternalWorkflowHandle, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { ChildReport, ConversationStatus } from '../../types.js';
import { ConversationModelKey, ConversationStatusKey, childStatusSignal } from '../messages.js';

/** What the run asks of Temporal (a recording stand-in in unit tests). */
export interface EffectsPort {
  /** The status search attribute (and, at a conversation's start, its model). */
  searchAttributes(values: { status: ConversationStatus; model?: string }): void;
  /** The Web UI's current details. */
  details(text: string): void;
  /** Tells the parent conversation this sub-agent's status and tree cost. */
  signalParent(parentId: string, report: ChildReport): void;
}

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
};
