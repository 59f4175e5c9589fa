// The team API's routes (Hono with @hono/zod-openapi): each route's zod schemas check its request
// and write its part of GET /openapi.json. Order of checks on /v1: body size (before it is read),
// content type, key or token (401, src/api/auth.ts), scope (403), the tenant's request rate (429), then the route, whose
// conversation lookups answer 404 for anything outside the caller's tenant.
import { randomBytes } from 'node:crypto';
import { OpenAPIHono, createRoute, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { Client } from '@temporalio/client';
import { actingAs } from '../client/acting.js';
import { act, actorOf, owned, problemOf, statusOf, type Caller, type ConversationsContext, type Owned } from './conversations.js';
import { createAuthenticator, type JwtSettings } from './auth.js';
import { limitsOf, scopeAllows, type KeyRing, type Scope } from './keys.js';
import { KeyedLanes } from '../core/keyed-lanes.js';
import { RateLimiter, RecentStarts, StreamSlots } from './limits.js';
import { Cursors, listTenantConversations } from './listing.js';
import { ApiProblem, PROBLEM_TYPE, problemResponse } from './problems.js';
import { registerResponses } from './responses.js';
import { startForCaller, type StartDeps } from './start.js';
import {
  ConversationIdParam,
  ConversationList,
  CreateConversation,
  EmptyBody,
  EventList,
  EventsQuery,
  ListQuery,
  MessageAccepted,
  PauseBody,
  RejectBody,
  SendMessage,
  Status,
} from './schemas.js';

/** How long a request's Temporal calls may take in all (a stream's excepted). */
const REQUEST_DEADLINE_MS = 30_000;

/** The largest request body the API reads (a message is at most 200,000 characters). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What the API serves with. */
export interface ApiOptions {
  client: Client;
  keys: KeyRing;
  /** An OpenID provider whose tokens are accepted besides the keys (see src/api/auth.ts). */
  jwt?: JwtSettings;
  workspacesDir: string;
  /** Models a caller may name (besides none: the worker's). */
  allowedModels?: string[];
  /**
   * Checks a new conversation's webhook and keeps its secret under the conversation's id (see
   * src/webhooks `prepareWebhook`), answering what the conversation itself holds; an
   * InvalidRequestError says why a webhook is refused. Without it, webhooks are refused.
   */
  prepareWebhook?: (id: string, webhook: { url: string; secret: string }) => Promise<{ url: string }>;
  /** Signs list cursors (default: random, so cursors last as long as the process; `faheem api` keeps one under FAHEEM_HOME). */
  cursorKey?: Uint8Array;
  /** For tests: the clock of the rate limiter. */
  now?: () => number;
}

type Env = { Variables: { caller: Caller } };

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const security = [{ bearer: [] }];
const problems = {
  400: problemResponse('The request is not valid'),
  401: problemResponse('No valid API key'),
  403: problemResponse("The key's scope does not allow this"),
  404: problemResponse('No such conversation in your tenant'),
  429: problemResponse('Too many requests or running conversations'),
};

/** Every route's method and path (OpenAPI form), for 405 answers. */
const ROUTES: { method: string; path: string }[] = [];

function route<R extends Parameters<typeof createRoute>[0]>(r: R) {
  ROUTES.push({ method: r.method.toUpperCase(), path: r.path });
  return createRoute({ ...r, security, responses: { ...problems, ...r.responses } });
}

const createConversation = route({
  method: 'post',
  path: '/v1/conversations',
  summary: 'Start a conversation; it runs at once on its first message',
  request: { body: { required: true, content: { 'application/json': { schema: CreateConversation } } } },
  responses: { 201: json(Status, 'The conversation, as `faheem status --json` shows it'), 409: problemResponse('The id is taken') },
});
const listConversations = route({
  method: 'get',
  path: '/v1/conversations',
  summary: "Your tenant's conversations, newest first",
  request: { query: ListQuery },
  responses: { 200: json(ConversationList, 'A page; `next_cursor` asks for the next') },
});
const getConversation = route({
  method: 'get',
  path: '/v1/conversations/{id}',
  summary: 'A conversation’s status',
  request: { params: ConversationIdParam },
  responses: { 200: json(Status, 'The status object') },
});
const sendMessage = route({
  method: 'post',
  path: '/v1/conversations/{id}/messages',
  summary: 'Add a user message (and run, unless `run` is false)',
  request: { params: ConversationIdParam, body: { required: true, content: { 'application/json': { schema: SendMessage } } } },
  responses: { 202: json(MessageAccepted, 'Recorded; read before the next model call'), 409: problemResponse('Closed') },
});
const actionRoute = (name: string, summary: string, schema: z.ZodType) =>
  route({
    method: 'post',
    path: `/v1/conversations/{id}/${name}`,
    summary,
    request: { params: ConversationIdParam, body: { required: false, content: { 'application/json': { schema } } } },
    responses: { 200: json(Status, 'The status object after it'), 409: problemResponse('The conversation cannot do this now') },
  });
const pauseRoute = actionRoute('pause', 'Pause (with `now`, also interrupt the running command)', PauseBody);
const resumeRoute = actionRoute('resume', 'Set it running again', EmptyBody);
const approveRoute = actionRoute('approve', 'Run the actions waiting for approval', EmptyBody);
const rejectRoute = actionRoute('reject', 'Refuse the actions waiting for approval', RejectBody);
const closeRoute = actionRoute('close', 'End the conversation (its history stays readable)', EmptyBody);
const eventsRoute = route({
  method: 'get',
  path: '/v1/conversations/{id}/events',
  summary: 'The event log; with `Accept: text/event-stream`, live until the conversation closes',
  request: { params: ConversationIdParam, query: EventsQuery },
  responses: {
    200: {
      description: 'JSON, or server-sent events (`id:` the event index; `Last-Event-ID` resumes after it)',
      content: { 'application/json': { schema: EventList }, 'text/event-stream': { schema: { type: 'string' } } },
    },
  },
});

/** The Hono app of the team API. */
export function createApiApp(options: ApiOptions): OpenAPIHono<Env> {
  const ctx: ConversationsContext = { client: options.client, workspacesDir: options.workspacesDir };
  const rate = new RateLimiter(options.now);
  const streams = new StreamSlots();
  const cursors = new Cursors(options.cursorKey ?? randomBytes(32));
  const authenticate = createAuthenticator(options.keys, options.jwt);
  const starting: StartDeps = {
    ctx,
    keys: options.keys,
    recent: new RecentStarts(10_000, options.now),
    lanes: new KeyedLanes(),
    allowedModels: options.allowedModels ?? [],
    ...(options.prepareWebhook ? { prepareWebhook: options.prepareWebhook } : {}),
  };
  const app = new OpenAPIHono<Env>({
    defaultHook: (result) => {
      if (!result.success) throw new ApiProblem('bad_request', zodDetail(result.error));
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: options.jwt
      ? `A key from \`faheem api-key create\`, or a JWT from ${options.jwt.issuer} for the audience ${options.jwt.audience}`
      : 'A key from `faheem api-key create`',
  });

  app.onError((err, c) => problem(c, err));
  app.notFound((c) => {
    const known = ROUTES.filter((r) => matches(r.path, c.req.path));
    if (known.length > 0) {
      c.header('Allow', [...new Set(known.map((r) => r.method))].join(', '));
      return problem(c, new ApiProblem('method_not_allowed', `${c.req.method} is not allowed here`));
    }
    return problem(c, new ApiProblem('not_found', 'no such route'));
  });
  app.use('*', async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Cache-Control', 'no-store');
    await next();
  });

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'faheemcode team API',
      version: '1',
      description: 'Durable coding-agent conversations for a team: keys, tenants, fair shares, webhooks.',
    },
  });

  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiProblem('too_large', `the body is over ${MAX_BODY_BYTES} bytes`, { Connection: 'close' });
      },
    }),
  );
  app.use('/v1/*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      if (hasBody(c)) {
        const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/json') throw new ApiProblem('unsupported_media_type', 'send the body as application/json');
      } else if (c.req.header('content-type') !== undefined) {
        // No body at all, whatever its type says: the same as none (an optional body is then `{}`,
        // a required one is asked for).
        const headers = new Headers(c.req.raw.headers);
        headers.delete('content-type');
        c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
      }
    }
    await next();
  });
  app.use('/v1/*', async (c, next) => {
    const caller = await authenticate(c.req.header('authorization'));
    const need: Scope = c.req.method === 'GET' || c.req.method === 'HEAD' ? 'read' : 'write';
    if (!scopeAllows(caller.scope, need)) throw new ApiProblem('forbidden', `a ${caller.scope} key cannot ${c.req.method} here`);
    const limits = limitsOf(await options.keys.current(), caller.tenant);
    const wait = rate.take(caller.tenant, limits.requestsPerSecond);
    if (wait !== undefined)
      throw new ApiProblem('too_many_requests', `over ${limits.requestsPerSecond} requests a second`, { 'Retry-After': String(wait) });
    c.set('caller', caller);
    // A stream lives until its conversation closes: no deadline (its slot is counted instead).
    if (isStream(c)) return next();
    // Every Temporal call a request makes ends by this deadline (no worker, a stuck task): 503, never a hang.
    await ctx.client.withDeadline(Date.now() + REQUEST_DEADLINE_MS, () => next());
  });

  app.openapi(createConversation, async (c) => {
    const caller = c.get('caller');
    const conversation = await startForCaller(starting, caller, c.req.valid('json'));
    return c.json(await statusOf(ctx, caller, await owned(ctx, caller, conversation.id)), 201);
  });

  app.openapi(listConversations, async (c) => {
    const caller = c.get('caller');
    const q = c.req.valid('query');
    const page = await listTenantConversations(ctx, caller, { limit: q.limit ?? 20, ...q }, cursors);
    return c.json(page, 200);
  });

  app.openapi(getConversation, async (c) => {
    const caller = c.get('caller');
    const o = await owned(ctx, caller, c.req.valid('param').id);
    return c.json(await statusOf(ctx, caller, o), 200);
  });

  app.openapi(sendMessage, async (c) => {
    const caller = c.get('caller');
    const o = await owned(ctx, caller, c.req.valid('param').id);
    const body = c.req.valid('json');
    const answer = await actingAs(actorOf(caller), () =>
      act(async () => {
        const index = await o.conversation.sendMessage(body.text);
        const run = body.run === false ? undefined : await o.conversation.resume();
        return { index, status: run?.status ?? 'queued' };
      }),
    );
    return c.json({ id: o.conversation.id, ...answer }, 202);
  });

  const action = (r: typeof pauseRoute, run: (o: Awaited<ReturnType<typeof owned>>, body: Record<string, unknown>) => Promise<unknown>) =>
    app.openapi(r, async (c) => {
      const caller = c.get('caller');
      const o = await owned(ctx, caller, c.req.valid('param').id);
      const body = (await bodyOf(c)) ?? {};
      await actingAs(actorOf(caller), () => act(() => run(o, body)));
      return c.json(await statusOf(ctx, caller, o), 200);
    });
  action(pauseRoute, (o, b) => o.conversation.pause({ ...(b.now === true ? { now: true } : {}), reason: 'api' }));
  action(resumeRoute, (o) => o.conversation.resume());
  action(approveRoute, (o) => o.conversation.approve());
  action(rejectRoute, (o, b) => o.conversation.reject(typeof b.reason === 'string' ? b.reason : ''));
  action(closeRoute, (o) => o.conversation.close());

  app.openapi(eventsRoute, async (c) => {
    const caller = c.get('caller');
    const o = await owned(ctx, caller, c.req.valid('param').id);
    const after = c.req.valid('query').after;
    const lastEventId = c.req.header('last-event-id');
    const wantsStream = (c.req.header('accept') ?? '').includes('text/event-stream');
    if (!wantsStream) {
      const events = await act(() => o.conversation.events((after ?? -1) + 1));
      return c.json({ data: events as unknown as z.infer<typeof EventList>['data'] }, 200);
    }
    const resumeAfter = lastEventId !== undefined && /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : after;
    const release = streams.take(caller.tenant);
    return streamSSE(c, async (stream) => {
      try {
        await followEvents(stream, o, resumeAfter);
      } finally {
        release();
      }
    }) as never;
  });

  registerResponses(app, { ctx, starting, streams, knownRoute: (method, path) => ROUTES.push({ method, path }) });

  return app;
}

/** The JSON body of an action (optional there); zod-openapi checked it when one was sent. */
async function bodyOf(c: Context<Env>): Promise<Record<string, unknown> | undefined> {
  if (!hasBody(c)) return undefined;
  return (c.req as unknown as { valid(t: 'json'): Record<string, unknown> }).valid('json');
}

/** Writes a conversation's events to an SSE stream from after `after`, live until it closes or the client goes. */
async function followEvents(stream: SSEStreamingApi, o: Owned, after: number | undefined): Promise<void> {
  const stop = new AbortController();
  stream.onAbort(() => stop.abort());
  const events = o.conversation.follow({ fromIndex: (after ?? -1) + 1, signal: stop.signal, until: (s) => s.closed });
  for await (const e of events) await stream.writeSSE({ id: String(e.index), data: JSON.stringify(e) });
  await stream.writeSSE({ event: 'end', data: JSON.stringify({ closed: true }) });
}

/** A request for server-sent events (conversation events, a response's stream). */
function isStream(c: Context): boolean {
  return (c.req.header('accept') ?? '').includes('text/event-stream') || c.req.query('stream') === 'true';
}

function hasBody(c: Context): boolean {
  const length = c.req.header('content-length');
  return (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
}

/** The problem body for an error: ours as they are, Hono's with their status, anything else a 500 that names nothing inside. */
function problem(c: Context, err: unknown): Response {
  const mapped = problemOf(err);
  let p: ApiProblem;
  if (mapped instanceof ApiProblem) p = mapped;
  else if (err instanceof HTTPException && err.status === 413) p = new ApiProblem('too_large', `the body is over ${MAX_BODY_BYTES} bytes`);
  else if (err instanceof HTTPException && err.status === 415)
    p = new ApiProblem('unsupported_media_type', 'send a JSON body with Content-Type: application/json');
  else if (err instanceof HTTPException && err.status < 500) p = new ApiProblem('bad_request', err.message || 'malformed request');
  else if (isUnavailable(err)) p = new ApiProblem('unavailable', 'Temporal did not answer; try again');
  else {
    console.error(`faheem api: ${c.req.method} ${c.req.path}: ${(err as Error)?.stack ?? String(err)}`);
    p = new ApiProblem('internal', 'an unexpected error; the API logged it');
  }
  for (const [k, v] of Object.entries(p.headers)) c.header(k, v);
  return c.body(JSON.stringify(p.body()), p.status, { 'Content-Type': PROBLEM_TYPE });
}

function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: string };
  return e?.name === 'ServiceError' || e?.code === 14 || e?.code === 4;
}

/** Whether an OpenAPI path (`/v1/conversations/{id}`) matches a request path. */
function matches(pattern: string, actual: string): boolean {
  const p = pattern.split('/');
  const a = actual.split('/');
  return p.length === a.length && p.every((seg, i) => (seg.startsWith('{') ? a[i] !== '' : seg === a[i]));
}

/** A zod error in one line: the first few issues with their paths. */
function zodDetail(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || 'body'}: ${i.message}`)
    .join('; ');
}
