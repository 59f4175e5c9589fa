// Every error the team API answers, from one table: RFC 9457 problem details
// (`application/problem+json` with `type`, `title`, `status`, `detail`). Handlers throw an
// ApiProblem; the app's error handler turns it (and anything else it did not expect) into a body.
import { z } from '@hono/zod-openapi';
import { HttpError } from '../core/errors.js';

/** The kinds of problem the API answers, with their status and title. */
export const PROBLEMS = {
  bad_request: { status: 400, title: 'The request is not valid' },
  unauthorized: { status: 401, title: 'No valid API key' },
  forbidden: { status: 403, title: "The key's scope does not allow this" },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'The conversation cannot do this now' },
  too_large: { status: 413, title: 'The request body is too large' },
  unsupported_media_type: { status: 415, title: 'Send Content-Type: application/json' },
  too_many_requests: { status: 429, title: 'Too many requests' },
  unavailable: { status: 503, title: 'Temporal or the workers did not answer' },
  internal: { status: 500, title: 'Internal error' },
} as const;

export type ProblemKind = keyof typeof PROBLEMS;
export type ProblemStatus = (typeof PROBLEMS)[ProblemKind]['status'];

/** The problem body. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/** A problem a handler answers (an HttpError of the kind's status); `headers` go with it (Retry-After, WWW-Authenticate). */
export class ApiProblem extends HttpError {
  declare readonly status: ProblemStatus;

  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(PROBLEMS[kind].status, detail);
  }

  /** The RFC 9457 body. */
  body(): Problem {
    return {
      type: `https://faheemcode.dev/problems/${this.kind.replace(/_/g, '-')}`,
      title: PROBLEMS[this.kind].title,
      status: this.status,
      detail: this.detail,
    };
  }
}

/** The problem body's schema, for the OpenAPI document. */
export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
  })
  .openapi('Problem');

/** The content type problems are answered with. */
export const PROBLEM_TYPE = 'application/problem+json';

/** A problem response of `status` for a route's `responses` in the OpenAPI document. */
export function problemResponse(description: string) {
  return { description, content: { [PROBLEM_TYPE]: { schema: ProblemSchema } } };
}
