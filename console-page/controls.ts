// Which of a conversation's controls apply in which status: one table, read by the page's buttons
// and unit-tested. Pure (no DOM).

/** A control on the conversation's page (the buttons are named `Pause`, `Pause now`, `Resume`, `Send`, `Approve`, `Reject`, `Close`). */
export type Control = 'pause' | 'pauseNow' | 'resume' | 'send' | 'approve' | 'reject' | 'close';

/** What the page knows of a conversation when it draws its controls. */
export interface ControlView {
  /** The status (null or unknown before a worker has run it). */
  status: string | null | undefined;
  /** The workflow has completed: nothing applies. */
  closed: boolean;
  /** Messages waiting for the next run. */
  pendingMessages?: number | undefined;
}

type Rule = boolean | ((v: ControlView) => boolean);

const hasMessages = (v: ControlView) => (v.pendingMessages ?? 0) > 0;

/**
 * Per status, whether each control applies. Pause stops a running conversation; Resume goes on
 * after a pause, runs messages sent to an idle one, or tries again after an error or stuck;
 * Approve and Reject answer a confirmation; Send and Close apply while it is open.
 */
export const CONTROL_TABLE: Record<string, Record<Control, Rule>> = {
  running: { pause: true, pauseNow: true, resume: false, send: true, approve: false, reject: false, close: true },
  paused: { pause: false, pauseNow: false, resume: true, send: true, approve: false, reject: false, close: true },
  idle: { pause: false, pauseNow: false, resume: hasMessages, send: true, approve: false, reject: false, close: true },
  waiting_for_confirmation: { pause: false, pauseNow: false, resume: false, send: true, approve: true, reject: true, close: true },
  finished: { pause: false, pauseNow: false, resume: hasMessages, send: true, approve: false, reject: false, close: true },
  error: { pause: false, pauseNow: false, resume: true, send: true, approve: false, reject: false, close: true },
  stuck: { pause: false, pauseNow: false, resume: true, send: true, approve: false, reject: false, close: true },
};

/** Before any worker has said a status: only what needs none to be known. */
const UNKNOWN: Record<Control, Rule> = {
  pause: false,
  pauseNow: false,
  resume: false,
  send: true,
  approve: false,
  reject: false,
  close: true,
};

/** Whether each control is enabled for this conversation. */
export function enabledControls(v: ControlView): Record<Control, boolean> {
  const row = (v.status && Object.prototype.hasOwnProperty.call(CONTROL_TABLE, v.status) ? CONTROL_TABLE[v.status] : undefined) ?? UNKNOWN;
  const out = {} as Record<Control, boolean>;
  for (const [control, rule] of Object.entries(row) as [Control, Rule][]) {
    out[control] = !v.closed && (typeof rule === 'function' ? rule(v) : rule);
  }
  return out;
}
