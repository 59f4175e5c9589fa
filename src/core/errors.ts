// One error taxonomy for the package. Every error faheemcode throws on purpose is a FaheemError;
// callers (the CLI, the SDK, users) tell kinds apart with `instanceof` or `code`, never by text.
// No imports at all: the classes are the same everywhere they are thrown (SDK, CLI, worker).

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
  | 'timeout'
  | 'server_start'
  | 'hooks_config'
  | 'usage'
  | 'http'
  | 'model_unavailable'
  | 'model_rejected'
  | 'model_bad_response'
  | 'context_window_exceeded'
  | 'workspace_unavailable'
  | 'tool_not_started'
  | 'live_offset_truncated'
  | 'deploy'
  | 'object_store'
  | 'webhook';

/** Where an error keeps the names of its class and their ancestors up to FaheemError (shared across copies). */
const KINDS = Symbol.for('faheemcode.errorKinds');

/**
 * The base of every error faheemcode throws on purpose; `name` is the class's own name.
 *
 * ```ts
 * try { await conversation.sendMessage(text); }
 * catch (err) { if (err instanceof FaheemError && err.code === 'conversation_closed') … }
 * ```
 */
export class FaheemError extends Error {
  /** The kind of failure, for callers that switch on it. */
  readonly code: FaheemErrorCode;

  constructor(code: FaheemErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    // The subclass's name, so stack traces and `String(err)` say what it is.
    this.name = new.target.name;
    Object.defineProperty(this, KINDS, { value: kindsOf(new.target), enumerable: false });
  }

  /**
   * `err instanceof X` by the class names an error was made with, not by prototype: the SDK, the
   * CLI and `faheem acp` may load two copies of this package, whose classes differ but whose
   * errors are the same kinds (Temporal's own errors do the same).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const kinds = (value as { [KINDS]?: unknown })[KINDS];
    if (Array.isArray(kinds)) return kinds.includes(this.name);
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/** The class names from `target` up to and including FaheemError. */
function kindsOf(target: abstract new (...args: never[]) => unknown): string[] {
  const kinds: string[] = [];
  for (let c: unknown = target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
    kinds.push((c as { name: string }).name);
    if ((c as { name: string }).name === 'FaheemError') break;
  }
  return kinds;
}

/** No conversation (workflow) has this id on the server. */
export class ConversationNotFoundError extends FaheemError {
  /** The id that was asked for. */
  readonly id: string;
  constructor(id: string, options?: { cause?: unknown }) {
    super('conversation_not_found', `no conversation with id "${id}" (check the id with \`faheem list\`)`, options);
    this.id = id;
  }
}

/** The conversation's workflow has ended (closed, or its idle timeout): it takes no more messages or commands. */
export class ConversationClosedError extends FaheemError {
  /** The conversation's id. */
  readonly id: string;
  /** `message` defaults to "conversation <id> is closed"; the CLI names what could not be done. */
  constructor(id: string, message = `conversation ${id} is closed`, options?: { cause?: unknown }) {
    super('conversation_closed', message, options);
    this.id = id;
  }
}

/** The conversation refused the request (an update's validator said no); `message` says why. */
export class InvalidRequestError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_request', message, options);
  }
}

/** No worker answered in time: the request needs a running `faheem worker` against this server. */
export class NoWorkerError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('no_worker', message, options);
  }
}

/** The Temporal server did not answer: the message names the address and what to do. */
export class ServerUnreachableError extends FaheemError {
  /** The address that was tried (host:port). */
  readonly address: string;
  /** Why, in a few words: "connection refused", "no answer within 5 s", … */
  readonly reason: string;
  constructor(address: string, reason: string, options?: { cause?: unknown }) {
    super(
      'server_unreachable',
      `cannot reach Temporal at ${address} (${reason}). Start one with \`npx faheem server\`, or set TEMPORAL_ADDRESS.`,
      options,
    );
    this.address = address;
    this.reason = reason;
  }
}

/** A sandbox that was asked for but cannot be used, or a sandbox setting that makes no sense. */
export class SandboxError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('sandbox', message, options);
  }
}

/** An encryption key or key list that cannot be used; the message names the variable and what is wrong. */
export class EncryptionConfigError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('encryption_config', message, options);
  }
}

/** A payload this process cannot decrypt (no key, unknown key id, wrong key, altered data). */
export class DecryptionError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('decryption', message, options);
  }
}

/**
 * A tool call stopped before it finished (`faheem pause --now`, close), with what it had printed so
 * far. Tools may throw it (or any error with a string `partialOutput`); the output is kept.
 */
export class ToolInterruptedError extends FaheemError {
  /** The call's output until it was stopped. */
  readonly partialOutput: string;
  constructor(partialOutput: string, message = 'interrupted by a pause', options?: { cause?: unknown }) {
    super('tool_interrupted', message, options);
    this.partialOutput = partialOutput;
  }
}

/** A command line that cannot be carried out as given (the CLI's own errors); the message says what to do. */
export class UsageError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, options);
  }
}

/** A wait (`waitUntilStopped`, `waitUntil` with `timeoutMs`) ran out of time before the conversation got there. */
export class WaitTimeoutError extends FaheemError {
  /** The conversation waited on. */
  readonly id: string;
  constructor(id: string, message: string, options?: { cause?: unknown }) {
    super('timeout', message, options);
    this.id = id;
  }
}

/** A local server faheem starts (the Temporal dev server, its CLI, the codec server) could not start; the message says why. */
export class ServerStartError extends FaheemError {
  /**
   * The server's process ended before it answered (the dev server's port was most likely taken
   * meanwhile): starting it again on other ports may work.
   */
  readonly exitedAtStart: boolean;
  /** A faheem server (Temporal with faheem's search attributes) already serves on the port: none was needed. */
  readonly alreadyServing: boolean;
  constructor(message: string, options: { cause?: unknown; exitedAtStart?: boolean; alreadyServing?: boolean } = {}) {
    const { exitedAtStart = false, alreadyServing = false, ...errorOptions } = options;
    super('server_start', message, errorOptions);
    this.exitedAtStart = exitedAtStart;
    this.alreadyServing = alreadyServing;
  }
}

/**
 * No model can be called as configured: no model name, an unknown provider without a base URL, or no
 * API key on the worker. The message names the variable to set.
 */
export class ModelConfigError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('model_config', message, options);
  }
}

/**
 * A request one of faheem's HTTP servers (the console, the codec server) refuses, with the status it
 * answers (400, 401, 403, 404, 405, 413, 415, 422, 500) and `{ "error": message }` as the body.
 */
export class HttpError extends FaheemError {
  /** The HTTP status answered. */
  readonly status: number;
  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super('http', message, options);
    this.status = status;
  }
}

/** A Worker Deployment request the server refused or that cannot be done (no such deployment or version, a check that found breaking histories). */
export class DeployError extends FaheemError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('deploy', message, options);
  }
}
