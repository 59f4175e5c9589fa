// The team API's request and response shapes: one zod schema each, which checks the request and
// writes the OpenAPI document (GET /openapi.json), so the document cannot drift from the checks.
import { z } from '@hono/zod-openapi';
import { CONVERSATION_STATUSES } from '../core/types.js';
import { MAX_CHAIN } from '../models/workflow/model-chain.js';

/** The longest message the API takes (the SDK's own limit is checked too). */
export const MAX_MESSAGE_CHARS = 200_000;

export const ConversationIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'acme:fix-login' }),
});

export const CreateConversation = z
  .strictObject({
    message: z.string().min(1).max(MAX_MESSAGE_CHARS).openapi({ description: 'The first user message; the conversation runs at once.' }),
    workspace: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/)
      .optional()
      .openapi({ description: "A folder name under your tenant's own folder (default: the conversation's id). Never a path." }),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: "A model the operator allows (`faheem api --allow-model`); default: the worker's." }),
    fallbacks: z
      .array(
        z
          .string()
          .min(1)
          .max(200)
          .regex(/^[^,]+$/),
      )
      .max(MAX_CHAIN - 1)
      .optional()
      .openapi({
        description:
          'Models to move to, in order, when the one before is unavailable (429, 5xx, 529, unreachable); each one the operator allows.',
      }),
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)
      .optional()
      .openapi({ description: 'Your id for it; the conversation id becomes `<tenant>:<id>`.' }),
    confirm: z.enum(['never', 'risky', 'always']).optional().openapi({ description: 'Which actions wait for approve/reject.' }),
    maxIterations: z.number().int().min(1).max(1000).optional(),
    outputSchema: z.record(z.string(), z.unknown()).optional().openapi({
      description:
        'A JSON Schema the final answer must match: it is checked, sent back with what is wrong (at most 3 times), and its JSON value is `output` in the status.',
    }),
    pool: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)
      .optional()
      .openapi({ description: "A pool of hosts the operator runs (`faheem worker --pool`): the workspace lives in the pool's store." }),
    webhook: z
      .strictObject({
        url: z.string().min(1).max(2000),
        secret: z.string().min(16).max(200).openapi({ description: 'Signs each delivery (X-Faheem-Signature); never stored in history.' }),
      })
      .optional(),
  })
  .openapi('CreateConversation');

export const Status = z
  .looseObject({
    id: z.string(),
    status: z.string(),
    tenant: z.string(),
    workspace: z.string().nullable(),
    closed: z.boolean(),
  })
  .openapi('ConversationStatus', {
    description: 'The object `faheem status --json` prints, with the workspace as its name and the tenant.',
  });

export const ListQuery = z.object({
  status: z.enum(CONVERSATION_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().max(2000).optional(),
});

export const ConversationList = z
  .object({
    data: z.array(Status),
    next_cursor: z.string().nullable(),
  })
  .openapi('ConversationList');

export const SendMessage = z
  .strictObject({
    text: z.string().min(1).max(MAX_MESSAGE_CHARS),
    run: z.boolean().optional().openapi({ description: 'Also set the conversation running (default true).' }),
  })
  .openapi('SendMessage');

export const MessageAccepted = z.object({ id: z.string(), index: z.number().int(), status: z.string() }).openapi('MessageAccepted');

export const PauseBody = z
  .strictObject({ now: z.boolean().optional().openapi({ description: 'Also interrupt the running command.' }) })
  .openapi('Pause');
export const RejectBody = z.strictObject({ reason: z.string().max(10_000).optional() }).openapi('Reject');
export const EmptyBody = z.strictObject({}).openapi('Empty');

export const EventsQuery = z.object({
  after: z.coerce.number().int().min(-1).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: 'Only events after this index.' }),
});

export const Event = z
  .looseObject({ index: z.number().int(), kind: z.string(), timestamp: z.string() })
  .openapi('Event', { description: 'One event as `faheem events --json` prints it.' });

export const EventList = z.object({ data: z.array(Event) }).openapi('EventList');
