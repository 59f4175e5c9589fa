// The OpenAI Responses shape of the team API: POST /v1/responses, GET /v1/responses/{id} (JSON, or
// with `stream=true` server-sent events from `starting_after`), POST /v1/responses/{id}/cancel. A
// response is one run of a conversation: creating one starts a conversation (the same path as
// POST /v1/conversations) or, with `previous_response_id`, adds a message to that response's
// conversation and runs it again. The response id names the run (response-id.ts), so nothing is
// stored here; what a response shows is computed from the run's events (response-shape.ts).
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import type { StreamSlots } from './limits.js';
import type { ConversationEvent } from '../core/types.js';
import { ConversationModelKey } from '../conversation/workflow/messages.js';
import { actingAs } from '../client/acting.js';
import { act, actorOf, owned, type Caller, type ConversationsContext, type Owned } from './conversations.js';
import { ApiProblem, problemResponse } from './problems.js';
import { decodeResponseId, encodeResponseId, type ResponseRef } from './response-id.js';
import { responseOf, responseStatus, runEvents, runStopped, streamEventsOf, userTextOf, type ResponseMeta } from './response-shape.js';
import { startForCaller, type StartDeps } from './start.js';

/** The model name that stands for the worker's own model (LLM_MODEL). */
export const DEFAULT_MODEL_NAME = 'faheem';

/** How long a cancel waits for the run to show it stopped before it answers anyway. */
const CANCEL_WAIT_MS = 10_000;

/** What the responses routes need from the app. */
export interface ResponsesDeps {
  ctx: ConversationsContext;
  /** The shared start path (the tenant's limits and workspace, the allowed models). */
  starting: StartDeps;
  /** Tells the app a route exists (for its 405 answers). */
  knownRoute: (method: string, path: string) => void;
  /** The tenant's open event streams (a slot per stream; 429 when all are taken). */
  streams: StreamSlots;
}

type Env = { Variables: { caller: Caller } };

const security = [{ bearer: [] }];
const problems = {
  400: problemResponse('The request is not valid'),
  401: problemResponse('No valid API key'),
  403: problemResponse("The key's scope does not allow this"),
  404: problemResponse('No such response in your tenant'),
  429: problemResponse('Too many requests or running conversations'),
};

const InputText = z.looseObject({ type: z.string(), text: z.string().optional() });
const InputItem = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: z.union([z.string(), z.array(InputText)]).optional(),
});

export const CreateResponse = z
  .strictObject({
    model: z
      .string()
      .min(1)
      .max(200)
      .openapi({ description: "`faheem` for the worker's model, or a model the operator allows (`faheem api --allow-model`)." }),
    input: z
      .union([z.string(), z.array(InputItem).max(1000)])
      .openapi({ description: 'The user message: a string, or user messages whose text (`input_text` parts) is joined.' }),
    background: z.boolean().optional().openapi({ description: 'Must be true: a response runs in the background; retrieve or stream it.' }),
    previous_response_id: z
      .string()
      .max(400)
      .optional()
      .openapi({ description: "Continue that response's conversation: a new message and a new run." }),
    stream: z.boolean().optional().openapi({ description: 'Not taken here (false only): stream with GET /v1/responses/{id}?stream=true.' }),
    store: z.boolean().optional().openapi({ description: 'Responses are always kept (their conversation is); false is refused.' }),
    confirm: z.enum(['never', 'risky', 'always']).optional().openapi({
      description: "faheem's own: which actions of a new conversation wait for approve/reject (the response is `incomplete` meanwhile).",
    }),
  })
  .openapi('CreateResponse');

const ResponseIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(400)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'resp_MS4wLmFjbWU6Zml4LWxvZ2lu' }),
});

const RetrieveQuery = z.object({
  stream: z.enum(['true', 'false']).optional().openapi({ description: 'true: server-sent events (`event:` the type, `data:` its JSON).' }),
  starting_after: z.coerce
    .number()
    .int()
    .min(-1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .openapi({ description: 'With stream=true: only events whose sequence_number is greater.' }),
});

const ResponseSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.enum(['queued', 'in_progress', 'completed', 'cancelled', 'failed', 'incomplete']),
    model: z.string(),
    output: z.array(z.looseObject({ id: z.string(), type: z.literal('message') })),
    output_text: z.string(),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.looseObject({ reason: z.string(), message: z.string() }).nullable(),
    conversation: z.object({ id: z.string() }),
  })
  .openapi('Response', { description: "One run of a conversation, as OpenAI's Responses API shapes it." });

function route<R extends Parameters<typeof createRoute>[0]>(r: R) {
  return createRoute({ ...r, security, responses: { ...problems, ...r.responses } });
}

const createRoute_ = route({
  method: 'post',
  path: '/v1/responses',
  summary: 'Start a response (in the background): a new conversation, or the next run of `previous_response_id`’s',
  request: { body: { required: true, content: { 'application/json': { schema: CreateResponse } } } },
  responses: {
    200: { description: 'The response, queued', content: { 'application/json': { schema: ResponseSchema } } },
    409: problemResponse('The previous response is still running, is not the latest, or its conversation is closed'),
  },
});
const retrieveRoute = route({
  method: 'get',
  path: '/v1/responses/{id}',
  summary: 'A response; with `stream=true`, its events from `starting_after` on, live until it stops',
  request: { params: ResponseIdParam, query: RetrieveQuery },
  responses: {
    200: {
      description: 'The response, or server-sent events (each with its `sequence_number`; `id:` the same)',
      content: { 'application/json': { schema: ResponseSchema }, 'text/event-stream': { schema: { type: 'string' } } },
    },
  },
});
const cancelRoute = route({
  method: 'post',
  path: '/v1/responses/{id}/cancel',
  summary: 'Cancel a response: its conversation pauses (now) and the response is `cancelled`; a stopped one is answered as it is',
  request: { params: ResponseIdParam },
  responses: { 200: { description: 'The response after it', content: { 'application/json': { schema: ResponseSchema } } } },
});

/** Adds the responses routes to the team API's app. */
export function registerResponses(app: OpenAPIHono<Env>, deps: ResponsesDeps): void {
  const { ctx } = deps;
  for (const r of [createRoute_, retrieveRoute, cancelRoute]) deps.knownRoute(r.method.toUpperCase(), r.path);

  app.openapi(createRoute_, async (c) => {
    const caller = c.get('caller');
    const body = c.req.valid('json');
    if (body.background !== true)
      throw new ApiProblem(
        'bad_request',
        'background: only background responses are served here: pass background: true, then retrieve or stream it',
      );
    if (body.stream === true)
      throw new ApiProblem('bad_request', 'stream: create with background: true, then stream with GET /v1/responses/{id}?stream=true');
    if (body.store === false) throw new ApiProblem('bad_request', 'store: a response is kept with its conversation; false is not taken');
    const text = userTextOf(body.input);
    const model = body.model === DEFAULT_MODEL_NAME ? undefined : body.model;
    const now = Math.floor(Date.now() / 1000);
    if (body.previous_response_id === undefined) {
      const conversation = await startForCaller(deps.starting, caller, {
        message: text,
        ...(model !== undefined ? { model } : {}),
        ...(body.confirm !== undefined ? { confirm: body.confirm } : {}),
      });
      const ref: ResponseRef = { conversationId: conversation.id, run: 1, from: 0 };
      return c.json(responseOf({ ...ref, id: encodeResponseId(ref) }, [], { model: body.model, now }), 200);
    }
    if (body.confirm !== undefined)
      throw new ApiProblem('bad_request', 'confirm: set when a conversation starts, not with previous_response_id');
    const previous = await ownedResponse(ctx, caller, body.previous_response_id, 'previous_response_id');
    const kept = modelOf(previous.owned);
    if (body.model !== kept)
      throw new ApiProblem('bad_request', `model: a continued response keeps its conversation's model: pass ${JSON.stringify(kept)}`);
    const started = await actingAs(actorOf(caller), () =>
      act(async () => {
        const conversation = previous.owned.conversation;
        const state = await conversation.state();
        if (state.closed) throw new ApiProblem('conflict', "previous_response_id: that response's conversation is closed");
        if (state.runNumber !== previous.ref.run)
          throw new ApiProblem('conflict', "previous_response_id: not its conversation's latest response (a later run has begun)");
        if (state.status === 'running' || state.status === 'waiting_for_confirmation' || state.pendingActions.length > 0)
          throw new ApiProblem(
            'conflict',
            'previous_response_id: that response is still in progress or waits for approval: wait for it to stop, or cancel it',
          );
        const index = await conversation.sendMessage(text);
        const run = await conversation.resume();
        return { index, runNumber: run.runNumber };
      }),
    );
    const ref: ResponseRef = { conversationId: previous.owned.conversation.id, run: started.runNumber, from: started.index };
    return c.json(responseOf({ ...ref, id: encodeResponseId(ref) }, [], { model: body.model, now }), 200);
  });

  app.openapi(retrieveRoute, async (c) => {
    const caller = c.get('caller');
    const id = c.req.valid('param').id;
    const q = c.req.valid('query');
    const r = await ownedResponse(ctx, caller, id);
    const meta = metaOf(r.owned);
    if (q.stream !== 'true') {
      if (q.starting_after !== undefined) throw new ApiProblem('bad_request', 'starting_after goes with stream=true');
      const run = await readRun(r);
      return c.json(responseOf(r.named, run, meta, closedOf(r.owned)), 200);
    }
    await readRun(r); // 404 before the stream opens for an id no run starts at
    const lastEventId = c.req.header('last-event-id')?.trim();
    // A reconnecting EventSource sends the URL it first opened and the last id it saw: the id wins.
    const after = lastEventId !== undefined && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : (q.starting_after ?? -1);
    const release = deps.streams.take(caller.tenant);
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      const run: ConversationEvent[] = [];
      let sent = after;
      const conversation = r.owned.conversation;
      try {
        const events = conversation.follow({ fromIndex: r.ref.from, signal: stop.signal, until: (s) => s.closed });
        for await (const e of events) {
          if (e.index < r.ref.from) continue;
          run.push(e);
          for (const out of streamEventsOf(r.named, run, meta)) {
            if (out.sequence_number <= sent) continue;
            await stream.writeSSE({ event: out.type, id: String(out.sequence_number), data: JSON.stringify(out) });
            sent = out.sequence_number;
          }
          if (runStopped(run)) break;
          // Waiting for approval: the stream ends with response.incomplete unless more has happened since.
          if (e.kind === 'status' && responseStatus(run) === 'incomplete') {
            const s = await conversation.state();
            if (s.status === 'waiting_for_confirmation' && s.events <= e.index + 1) break;
          }
        }
      } catch (err) {
        if (!stop.signal.aborted) console.error(`faheem api: stream of ${id}: ${(err as Error)?.message ?? String(err)}`);
      } finally {
        release();
      }
    }) as never;
  });

  app.openapi(cancelRoute, async (c) => {
    const caller = c.get('caller');
    const r = await ownedResponse(ctx, caller, c.req.valid('param').id);
    const conversation = r.owned.conversation;
    let run = await readRun(r);
    if (!runStopped(run) && !closedOf(r.owned)) {
      const state = await act(() => conversation.state());
      const mine = state.runNumber === r.ref.run;
      if (mine && (state.status === 'running' || state.status === 'waiting_for_confirmation')) {
        await actingAs(actorOf(caller), () => act(() => conversation.pause({ now: true, reason: 'api: response cancelled' })));
        // The pause is a signal: wait (a little) until the run shows it, so the answer says cancelled.
        await conversation
          .waitUntil(
            (s) => s.runNumber !== r.ref.run || (s.status !== 'running' && s.status !== 'waiting_for_confirmation'),
            100,
            CANCEL_WAIT_MS,
          )
          .catch(() => undefined);
        run = await readRun(r);
      }
    }
    return c.json(responseOf(r.named, run, metaOf(r.owned), closedOf(r.owned)), 200);
  });
}

/** A response of the caller's tenant: its run, its conversation; 404 for a malformed id or anything outside the tenant. */
interface OwnedResponse {
  ref: ResponseRef;
  /** The ref with the id as the caller gave it. */
  named: ResponseRef & { id: string };
  owned: Owned;
}

async function ownedResponse(ctx: ConversationsContext, caller: Caller, id: string, field?: string): Promise<OwnedResponse> {
  const notFound = () => new ApiProblem('not_found', `${field ? `${field}: ` : ''}no response ${JSON.stringify(id.slice(0, 400))}`);
  const ref = decodeResponseId(id);
  if (!ref) throw notFound();
  let o: Owned;
  try {
    o = await owned(ctx, caller, ref.conversationId);
  } catch (err) {
    if (err instanceof ApiProblem && err.kind === 'not_found') throw notFound();
    throw err;
  }
  return { ref, named: { ...ref, id }, owned: o };
}

/** The run's events, read from its first; 404 when no run starts there (an id this API did not make). */
async function readRun(r: OwnedResponse): Promise<ConversationEvent[]> {
  const events = await act(() => r.owned.conversation.events(r.ref.from));
  const first = events[0];
  const startsHere =
    first === undefined ? r.ref.from === 0 : first.index === r.ref.from && first.kind === 'message' && first.source === 'user';
  if (!startsHere) throw new ApiProblem('not_found', `no response ${JSON.stringify(r.named.id)}`);
  return runEvents(events, r.ref.from);
}

/** The model a conversation's responses name: `faheem` for the worker's. */
function modelOf(o: Owned): string {
  const model = o.description.typedSearchAttributes.get(ConversationModelKey);
  return model === undefined || model === 'default' || model === '' ? DEFAULT_MODEL_NAME : String(model);
}

function metaOf(o: Owned): ResponseMeta {
  return { model: modelOf(o), now: Math.floor(Date.now() / 1000) };
}

/** Whether the conversation's workflow has ended (closed, or idle too long). */
function closedOf(o: Owned): boolean {
  return o.description.status.name !== 'RUNNING';
}
