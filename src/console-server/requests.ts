// What the console's API accepts (zod) and how an error becomes an HTTP answer: pure, unit-tested.
import { z } from 'zod';
import { conversationIdProblem } from '../conversation-id.js';
import { FaheemError, HttpError } from '../errors.js';
import { CONVERSATION_STATUSES, DEFAULTS } from '../types.js';

/** The largest request body the console reads (a message at its longest, as JSON, with room to spare). */
export const MAX_BODY_BYTES = DEFAULTS.maxMessageChars * 6 + 4096;

/** A conversation id as the console accepts it in a path: a valid one (conversation-id.ts), sub-agents' included. */
export const conversationId = z.string().superRefine((id, ctx) => {
  const problem = conversationIdProblem(id);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** `GET /api/conversations` query: status filter, page size and the page token of the previous page. */
export const listQuery = z.object({
  status: z.enum(CONVERSATION_STATUSES).optional(),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  pageToken: z
    .string()
    .max(4096)
    .regex(/^[A-Za-z0-9_-]*$/, 'not a page token')
    .optional(),
});

/** `GET /api/conversations/:id/follow` query: the first event index and live offset wanted. */
export const followQuery = z.object({
  from: z.coerce.number().int().min(0).default(0),
  liveFrom: z.coerce.number().int().min(0).optional(),
});

/** The body each action takes. */
export const actionBodies = {
  pause: z.object({ now: z.boolean().optional() }).strict(),
  resume: z.object({}).strict(),
  send: z.object({ text: z.string().min(1).max(DEFAULTS.maxMessageChars), run: z.boolean().optional() }).strict(),
  approve: z.object({}).strict(),
  reject: z.object({ reason: z.string().max(10_000).optional() }).strict(),
  close: z.object({}).strict(),
} as const;

/** The actions the console's buttons call. */
export type ActionName = keyof typeof actionBodies;

/** Whether `name` is one of the console's actions. */
export function isAction(name: string): name is ActionName {
  return Object.prototype.hasOwnProperty.call(actionBodies, name);
}

/** An error answered with a status and `{ error }` (the package's one HTTP error, from src/errors.ts). */
export { HttpError } from '../errors.js';

/** The first problem zod found, as one line: `field: message`. */
export function zodMessage(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid request';
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/** Parses `value` with `schema`, or throws a 400 HttpError that names the problem. */
export function parseOr400<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(400, zodMessage(r.error));
  return r.data;
}

/**
 * The status and message an error is answered with: the package's own errors by code (a missing
 * conversation 404, a closed one or a refused request 409, no worker 503, …); anything else 500
 * with its message (never a stack).
 */
export function errorAnswer(err: unknown): { status: number; error: string } {
  if (err instanceof HttpError) return { status: err.status, error: err.message };
  if (err instanceof FaheemError) {
    switch (err.code) {
      case 'conversation_not_found':
        return { status: 404, error: err.message };
      case 'conversation_closed':
      case 'invalid_request':
        return { status: 409, error: err.message };
      case 'no_worker':
      case 'timeout':
        return { status: 503, error: err.message };
      case 'server_unreachable':
        return { status: 502, error: err.message };
      case 'decryption':
      case 'encryption_config':
        return { status: 500, error: err.message };
      default:
        return { status: 500, error: err.message };
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, error: message.length > 500 ? `${message.slice(0, 500)}…` : message };
}
