// One error taxonomy for the package. Every error faheemcode throws on purpose is a FaheemError;
// callers (the CLI, the SDK, users) tell kinds apart with `instanceof` or `code`, never by text.
// Plain Node code only: workflow code uses Temporal's failures, not these.

/** What kind of failure an error is; stable strings users may switch on. */
export type FaheemErrorCode =
  | 'conversation_not_found'
  | 'conversation_closed'
  | 'invalid_request'
  | 'no_worker'
  | 'server_unreachable'
  | 'model_config'
  | 'sandbox'
  | 'encryption_config'
  | 'decryption'
  | 'tool_interrupted'
  | 'checkpoint'
  | 'usage';

/** The base of every error faheemcode throws on purpose; `name` is the class's own name. */
export class FaheemError extends Error {
  /** The kind of failure, for callers that switch on it. */
  readonly code: FaheemErrorCode;

  constructor(code: FaheemErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    // The subclass's name, so stack traces and `String(err)` say what it is.
    this.name = new.target.name;
  }
}
