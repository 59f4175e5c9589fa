// What a host call can end in besides its result: never started (a pause or close came first), or
// started on a host that was lost (a pooled conversation's call whose outcome is unknown).
import { FaheemError } from '../../../core/errors.js';

/** A host call that was never picked up, dropped because the conversation paused or closed. */
export class NotStarted extends FaheemError {
  constructor() {
    super('tool_not_started', 'the tool call was not started: the conversation paused or closed first');
  }
}

/** A call that may have run on a host that was lost: its outcome is unknown (the message says so, for the model). */
export class OutcomeUnknown extends FaheemError {
  constructor(message: string) {
    super('workspace_unavailable', message);
  }
}
