// The failure types: the `type` of every ApplicationFailure faheem throws from an activity or a
// workflow handler (and the one it reads from a dependency), each with its error code, whether
// Temporal retries it, who throws it and what it means. One table, so that the workflow, the
// activities and the clients agree on the strings; test/unit/core/failure-types.test.ts checks that every
// type thrown in src/ is in it. Workflow-safe: no imports but types (workflow code reads it).
//
// These strings are recorded in workflow histories (an activity's failure is an event). Workflow
// code branches on one of them only (ContextWindowExceeded, in runner/model-call.ts); renaming any
// of them would change what old histories mean, so they stay as they are.
import { ApplicationFailure, type Duration } from '@temporalio/common';
import type { FaheemErrorCode } from './errors.js';

/** What the table says about one failure type. */
export interface FailureTypeInfo {
  /** The FaheemErrorCode of this kind of failure. */
  readonly code: FaheemErrorCode;
  /** Whether Temporal retries the activity (by its retry policy); false: it fails at once. */
  readonly retryable: boolean;
  /** The activity, handler or package that throws it. */
  readonly thrownBy: string;
  /** When it happens, and what follows. */
  readonly means: string;
}

/** Every failure type faheem throws (or branches on), by its string. */
export const FAILURE_TYPES = {
  ModelUnavailable: {
    code: 'model_unavailable',
    retryable: true,
    thrownBy: 'callModel',
    means:
      "the model's endpoint could not be reached, or answered another status than those below (429, 5xx, 529, …); retried (after its Retry-After when it gave one)",
  },
  ModelBadResponse: {
    code: 'model_bad_response',
    retryable: true,
    thrownBy: 'callModel',
    means: 'the streamed reply ended before the model said it was complete; retried',
  },
  ModelRequestRejected: {
    code: 'model_rejected',
    retryable: false,
    thrownBy: 'callModel',
    means:
      'the provider refused the request (400, 401, 403, 404, 413, 422: a bad key, an unknown model, …); the run ends in error with its words',
  },
  ModelConfigError: {
    code: 'model_config',
    retryable: false,
    thrownBy: 'callModel',
    means: 'no model, an unknown provider without LLM_BASE_URL, or no API key on the worker (ModelConfigError)',
  },
  OutputSchemaInvalid: {
    code: 'invalid_request',
    retryable: false,
    thrownBy: 'callModel',
    means: "the conversation's output schema is not a JSON Schema (a client that did not check it); the run ends in error saying why",
  },
  ContextWindowExceeded: {
    code: 'context_window_exceeded',
    retryable: false,
    thrownBy: 'callModel',
    means: "the prompt is over the model's context window; the workflow condenses and asks once more",
  },
  WorkspaceUnavailable: {
    code: 'workspace_unavailable',
    retryable: false,
    thrownBy: 'prepareTools',
    means:
      "the workspace is missing, not a directory, or not readable and writable by the worker on the host of the conversation's task queue",
  },
  InvalidHooks: {
    code: 'hooks_config',
    retryable: false,
    thrownBy: 'runHooks',
    means: "the hooks the workflow sent do not pass the hooks schema (HooksConfigError's rules)",
  },
  CheckpointGitMissing: {
    code: 'checkpoint',
    retryable: false,
    thrownBy: 'checkpointWorkspace, restoreWorkspace, forkWorkspace, listCheckpoints',
    means: 'git is not installed on the workspace host',
  },
  CheckpointNotFound: {
    code: 'checkpoint',
    retryable: false,
    thrownBy: 'restoreWorkspace, forkWorkspace',
    means: 'no such checkpoint in the shadow repository',
  },
  CheckpointInvalid: {
    code: 'checkpoint',
    retryable: false,
    thrownBy: 'the checkpoint activities',
    means: 'the input (from history) or the request is not valid',
  },
  CheckpointGitFailed: {
    code: 'checkpoint',
    retryable: true,
    thrownBy: 'the checkpoint activities',
    means: 'a git command failed; retried',
  },
  HostFenced: {
    code: 'object_store',
    retryable: false,
    thrownBy: 'the checkpoint and tool activities of a pooled conversation, claimPoolHost',
    means: 'this host no longer holds the conversation (it moved to another host of the pool): its results are not accepted',
  },
  ObjectStoreConfig: {
    code: 'object_store',
    retryable: false,
    thrownBy: 'claimPoolHost, the checkpoint activities of a pooled conversation',
    means:
      "the object store is not set up (FAHEEM_OBJECT_STORE), refuses the credentials, an object is over its size cap, or an object there is refused: with a key, one in clear, unbound or moved from another key; one outside the conversation's chain",
  },
  ObjectStoreUnreachable: {
    code: 'object_store',
    retryable: true,
    thrownBy: 'claimPoolHost, the checkpoint activities of a pooled conversation',
    means: 'the object store did not answer; retried',
  },
  RewindFailed: {
    code: 'checkpoint',
    retryable: false,
    thrownBy: 'the rewind update',
    means:
      'the rewind did not happen (no such step, the workspace could not be restored); the update fails with the reason and the conversation is unchanged',
  },
  InvalidRequest: {
    code: 'invalid_request',
    retryable: false,
    thrownBy: "every update's validator (addMessage, run, approve, reject, setConfirmationPolicy, rewind, waitForChange), checkMessageText",
    means:
      'the conversation refused the request (an empty or too long message, closed, nothing to approve, no such step, ...); the client gets an InvalidRequestError with the reason',
  },
  CarriedStateInvalid: {
    code: 'deploy',
    retryable: false,
    thrownBy: 'the conversation workflow, as a continued run starts',
    means:
      'the state carried from the previous run has a shape this worker cannot read (a worker of another version wrote it); the workflow fails at once instead of retrying its task for ever',
  },
  WebhookRefused: {
    code: 'webhook',
    retryable: false,
    thrownBy: 'deliverWebhook',
    means:
      'the webhook may not be sent: its URL is not valid, its host resolves to a loopback, private, link-local, unique-local or metadata address FAHEEM_WEBHOOK_ALLOW does not list, or no secret is stored for the conversation; a failed `webhook` event says which',
  },
  WebhookRejected: {
    code: 'webhook',
    retryable: false,
    thrownBy: 'deliverWebhook',
    means: 'the receiver answered 4xx (other than 408 and 429) or a redirect (never followed); a failed `webhook` event records its status',
  },
  WebhookUnavailable: {
    code: 'webhook',
    retryable: true,
    thrownBy: 'deliverWebhook',
    means:
      'the receiver could not be reached, took too long, or answered 408, 429 or 5xx; retried with back-off until the delivery runs out of time (10 minutes)',
  },
  TruncatedOffset: {
    code: 'live_offset_truncated',
    retryable: false,
    thrownBy: '@temporalio/workflow-streams (not ours: the live reader branches on it)',
    means: 'a follower asked for live lines the stream has already dropped; it goes on from the oldest line kept',
  },
} as const satisfies Record<string, FailureTypeInfo>;

/** A failure type string of the table. */
export type FailureType = keyof typeof FAILURE_TYPES;

/** Each failure type by name (`FAILURE.RewindFailed === 'RewindFailed'`), for the places that throw or compare them. */
export const FAILURE: { readonly [K in FailureType]: K } = Object.freeze(
  Object.fromEntries(Object.keys(FAILURE_TYPES).map((k) => [k, k])) as { [K in FailureType]: K },
);

/** Whether `type` is one of the table's failure types. */
export function isFailureType(type: string): type is FailureType {
  return Object.prototype.hasOwnProperty.call(FAILURE_TYPES, type);
}

/**
 * The failure type an error carries: its own `type` or that of the first error in its `cause`
 * chain that has one (an ActivityFailure's ApplicationFailure, a WorkflowUpdateFailedError's, …).
 * Read by shape, not `instanceof`: a dependency may carry its own copy of Temporal's classes. A
 * TimeoutFailure ends the search: the failure it wraps is an earlier attempt's, not what happened.
 */
export function failureTypeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string') return type;
    if ((e as { name?: unknown }).name === 'TimeoutFailure') return undefined;
  }
  return undefined;
}

/** The FaheemErrorCode of the failure an error carries, when its type is in the table. */
export function failureCodeOf(err: unknown): FaheemErrorCode | undefined {
  const type = failureTypeOf(err);
  return type !== undefined && isFailureType(type) ? FAILURE_TYPES[type].code : undefined;
}

/** What a failure may carry beside its message. */
export interface FailureOptions {
  /** Data for the catcher (kept in history with the failure). */
  readonly details?: unknown[];
  /** A retryable failure's next attempt waits this long instead of the retry policy's backoff. */
  readonly nextRetryDelay?: Duration;
  /** What caused it. */
  readonly cause?: Error;
}

/**
 * The ApplicationFailure of one table type: retryable exactly when the table says so.
 *
 * ```ts
 * throw failure(FAILURE.WorkspaceUnavailable, `the workspace ${dir} is not a directory`);
 * ```
 */
export function failure(type: FailureType, message: string, options: FailureOptions = {}): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !FAILURE_TYPES[type].retryable,
    ...(options.details ? { details: options.details } : {}),
    ...(options.nextRetryDelay !== undefined ? { nextRetryDelay: options.nextRetryDelay } : {}),
    ...(options.cause ? { cause: options.cause } : {}),
  });
}
