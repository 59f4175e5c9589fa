// The console's page: the conversation list beside (or, on a narrow window, above) one conversation,
// its transcript streaming in, and the controls. Everything from the model or a command is a text
// node: Preact escapes it; nothing here sets HTML.
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { followConversation, getJson, imageUrl, postJson, setToken, takeToken } from './api.js';
import { buildBlocks, emptyTranscript, type Block, type TranscriptState } from './transcript.js';
import { enabledControls } from './controls.js';
import { shownTime } from '../src/core/text.js';
import type { ImageRef } from '../src/core/types/public.js';
import type { ChildNode as TreeNode, ConversationPage as Page, ConversationRow as Row } from '../src/console-server/rows.js';

const STATUSES = ['idle', 'running', 'paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck'] as const;

interface Detail {
  id: string;
  closed: boolean;
  temporalUrl: string;
  tree: TreeNode[];
  stateError?: string;
  state: {
    status: string;
    closed: boolean;
    model?: string;
    iterations?: number;
    runNumber?: number;
    pendingMessages?: number;
    metrics?: { accumulatedCost: number; promptTokens: number; completionTokens: number; cacheReadTokens: number; llmCalls: number };
    lastError?: string | null;
    workspace?: string;
    pendingActions?: { toolCallId: string; tool: string; arguments: unknown }[];
    parentId?: string | null;
    waitingForHost?: string | null;
    tenant?: string;
  };
}

const POLL_MS = 2000;
const cost = (c: number | null | undefined) => (c === null || c === undefined ? '–' : `$${c.toFixed(4)}`);
/** What the address's hash shows: a conversation (`#/c/ID`), the new-conversation form (`#/new`), or nothing chosen. */
type Route = { kind: 'conversation'; id: string } | { kind: 'new' } | { kind: 'none' };
const routeFromHash = (): Route => {
  if (location.hash === '#/new') return { kind: 'new' };
  const m = /^#\/c\/(.+)$/.exec(location.hash);
  if (!m) return { kind: 'none' };
  try {
    return { kind: 'conversation', id: decodeURIComponent(m[1]!) };
  } catch {
    return { kind: 'none' };
  }
};
/** The model a conversation uses, or what it is when no call has named it yet. */
const modelName = (m: string | null | undefined) => m || "worker's model";
/** How long the search box waits for more typing before it asks. */
const SEARCH_DELAY_MS = 250;

function StatusBadge({ status, closed }: { status: string | null; closed?: boolean }) {
  const s = status ?? 'unknown';
  return (
    <span class={`status status-${s}`}>
      {s}
      {closed ? ' (closed)' : ''}
    </span>
  );
}

/** The conversations, a page at a time, children under their parent; the first page refreshes itself. */
function ConversationList({ selected }: { selected: string | null }) {
  const [status, setStatus] = useState('');
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [first, setFirst] = useState<Row[]>([]);
  const [more, setMore] = useState<Row[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [firstNext, setFirstNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);

  const query = (pageToken?: string) => {
    const p = new URLSearchParams({ pageSize: '50' });
    if (status) p.set('status', status);
    if (search.trim()) p.set('q', search.trim());
    if (pageToken) p.set('pageToken', pageToken);
    return `/api/conversations?${p}`;
  };

  useEffect(() => {
    const timer = setTimeout(() => setSearch(typed), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [typed]);

  useEffect(() => {
    let stop = false;
    setMore([]);
    setNext(null);
    const load = async () => {
      try {
        const page = await getJson<Page>(query());
        if (stop) return;
        setFirst(page.conversations);
        setFirstNext(page.nextPageToken);
        setError(null);
      } catch (err) {
        if (!stop) setError((err as Error).message);
      }
    };
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [status, search]);

  const loadMore = async () => {
    const token = next ?? firstNext;
    if (!token) return;
    setLoading(true);
    try {
      const page = await getJson<Page>(query(token));
      setMore((m) => [...m, ...page.conversations]);
      setNext(page.nextPageToken ?? '');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setLoading(false);
    }
  };

  const rows = useMemo(() => {
    const seen = new Set(first.map((r) => r.id));
    return [...first, ...more.filter((r) => !seen.has(r.id))];
  }, [first, more]);
  const byParent = useMemo(() => {
    const ids = new Set(rows.map((r) => r.id));
    const m = new Map<string | null, Row[]>();
    for (const r of rows) {
      const key = r.parentId && ids.has(r.parentId) ? r.parentId : null;
      m.set(key, [...(m.get(key) ?? []), r]);
    }
    return m;
  }, [rows]);
  const hasMore = next === null ? firstNext !== null : next !== '';

  const item = (r: Row) => (
    <li key={r.id}>
      <a
        href={`#/c/${encodeURIComponent(r.id)}`}
        class={r.id === selected ? 'row selected' : 'row'}
        aria-current={r.id === selected ? 'true' : undefined}
      >
        <span class="row-title">{r.title ?? r.id}</span>
        <StatusBadge status={r.status} closed={r.closed} />
        {r.title ? <span class="row-id">{r.id}</span> : null}
        {r.workspace ? <span class="row-workspace">{r.workspace}</span> : null}
        <span class="row-meta">
          {modelName(r.model)}
          {r.tenant ? ` · tenant ${r.tenant}` : ''} · {cost(r.cost)} ·{' '}
          {r.closed ? `closed ${shownTime(r.lastActivity)}` : `started ${shownTime(r.startTime)}`}
        </span>
      </a>
      {byParent.get(r.id) ? <ul class="children">{byParent.get(r.id)!.map(item)}</ul> : null}
    </li>
  );

  return (
    <nav class="list" aria-label="Conversations">
      <div class="list-head">
        <h2>Conversations</h2>
        {/* Temporal's own order (a dev server cannot sort a list otherwise): said, so it reads as one. */}
        <span class="list-order">open ones newest first, then closed ones by when they closed</span>
        <a class="new-link" href="#/new">
          New conversation
        </a>
      </div>
      <div class="list-filters">
        <label>
          Search{' '}
          <input
            type="search"
            value={typed}
            placeholder="title, id or folder"
            onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option value={s} key={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {rows.length === 0 && !error ? (
        <p class="muted">
          No conversations{status ? ` with status ${status}` : ''}
          {search.trim() ? ` matching “${search.trim()}”` : ''}.
        </p>
      ) : null}
      <ul class="rows">{(byParent.get(null) ?? []).map(item)}</ul>
      {hasMore ? (
        <button type="button" onClick={() => void loadMore()} disabled={loading}>
          More
        </button>
      ) : null}
    </nav>
  );
}

function Tree({ nodes }: { nodes: TreeNode[] }) {
  return (
    <ul class="tree">
      {nodes.map((n) => (
        <li key={n.id}>
          <a href={`#/c/${encodeURIComponent(n.id)}`}>{n.id}</a> <StatusBadge status={n.status} closed={n.closed} /> {cost(n.cost)}
          {n.children.length ? <Tree nodes={n.children} /> : null}
        </li>
      ))}
    </ul>
  );
}

/** One image of a conversation, fetched from the console by hash; its name as text when it cannot be. */
function ImageView({ conversationId, image }: { conversationId: string; image: ImageRef }) {
  const [src, setSrc] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let url: string | null = null;
    let gone = false;
    imageUrl(conversationId, image.sha256).then(
      (u) => {
        if (gone) URL.revokeObjectURL(u);
        else setSrc((url = u));
      },
      () => !gone && setFailed(true),
    );
    return () => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [conversationId, image.sha256]);
  const label = `${image.name ?? 'image'} (${image.mimeType}, ${image.size} bytes)`;
  if (failed) return <span class="muted">{label}: not available</span>;
  return src ? <img class="image" src={src} alt={label} title={label} /> : <span class="muted">{label}…</span>;
}

function Images({ conversationId, images }: { conversationId: string; images: ImageRef[] | undefined }) {
  if (!images?.length) return null;
  return (
    <div class="images">
      {images.map((image) => (
        <ImageView key={image.sha256} conversationId={conversationId} image={image} />
      ))}
    </div>
  );
}

function BlockView({ b, conversationId }: { b: Block; conversationId: string }) {
  switch (b.type) {
    case 'message':
      return (
        <div class={`msg msg-${b.source}${b.rewound ? ' rewound' : ''}`}>
          <div class="who">
            {b.source} <span class="muted">{b.time}</span>
            {b.detail ? <span class="muted"> · {b.detail}</span> : null}
            {b.by ? <span class="muted by"> · by {b.by}</span> : null}
          </div>
          {b.output !== undefined ? (
            <div class="output-json">
              <div class="muted">output (matches the schema)</div>
              <pre>{b.output}</pre>
            </div>
          ) : (
            <div class="text">{b.text}</div>
          )}
          <Images conversationId={conversationId} images={b.images} />
        </div>
      );
    case 'thinking':
      return (
        <details class="thinking">
          <summary>Thinking</summary>
          <pre>{b.text}</pre>
        </details>
      );
    case 'tool':
      return (
        <div class={`tool${b.isError ? ' tool-error' : ''}`}>
          <div class="tool-head">
            <span class="tool-name">{b.tool}</span> <code>{b.title}</code>{' '}
            <span class="muted">
              {b.time}
              {b.running ? ' · running…' : b.exitCode !== undefined ? ` · exit ${b.exitCode}` : b.isError ? ' · failed' : ''}
              {b.detail ? ` · ${b.detail}` : ''}
              {b.by ? ` · by ${b.by}` : ''}
            </span>
          </div>
          {b.diff ? (
            <pre class="diff">
              {b.diff.map((l, i) => (
                <span key={i} class={l.sign === '+' ? 'add' : l.sign === '-' ? 'del' : l.sign === '@' ? 'hunk' : ''}>
                  {l.sign === '@' ? `${l.text}\n` : `${l.sign}${l.text}\n`}
                </span>
              ))}
            </pre>
          ) : null}
          {b.output !== undefined ? <pre class={b.running ? 'output live' : 'output'}>{b.output}</pre> : null}
          <Images conversationId={conversationId} images={b.images} />
        </div>
      );
    case 'error':
      return (
        <div class="event-error">
          error <span class="muted">{b.time}</span>: {b.text}
          {b.by ? <span class="muted by"> · by {b.by}</span> : null}
        </div>
      );
    case 'note':
      return (
        <div class="note">
          <span class="muted">{b.time}</span> {b.text}
          {b.by ? <span class="muted by"> · by {b.by}</span> : null}
        </div>
      );
    case 'streaming':
      return (
        <div class="msg msg-agent streaming" aria-live="polite">
          <div class="who">
            agent <span class="muted">streaming…</span>
          </div>
          {b.thinking ? (
            <details class="thinking">
              <summary>Thinking</summary>
              <pre>{b.thinking}</pre>
            </details>
          ) : null}
          <div class="text">{b.text}</div>
          {b.tools.map((t, i) => (
            <pre key={i} class="output live">{`${t.name} ${t.text}`}</pre>
          ))}
        </div>
      );
    default:
      return null;
  }
}

/** One conversation: status and cost, the controls, the sub-agents, the transcript as it streams. */
function ConversationView({ id }: { id: string }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [detailError, setDetailError] = useState<string | null>(null);
  const [streamError, setStreamError] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  const [reason, setReason] = useState('');
  const [transcript, setTranscript] = useState<TranscriptState>(emptyTranscript);
  const transcriptRef = useRef(transcript);
  // What the server warned of when this page started it (no worker polling, a workspace on another host).
  const [warnings] = useState<string[]>(() => {
    const key = `faheem-warnings:${id}`;
    const saved = sessionStorage.getItem(key);
    sessionStorage.removeItem(key);
    try {
      const list: unknown = saved ? JSON.parse(saved) : [];
      return Array.isArray(list) ? list.map(String) : [];
    } catch {
      return [];
    }
  });

  const refresh = useCallback(async () => {
    try {
      setDetail(await getJson<Detail>(`/api/conversations/${encodeURIComponent(id)}`));
      setDetailError(null);
    } catch (err) {
      setDetailError((err as Error).message);
    }
  }, [id]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  useEffect(() => {
    const abort = new AbortController();
    transcriptRef.current = emptyTranscript();
    setTranscript(transcriptRef.current);
    void followConversation(
      id,
      (f) => {
        transcriptRef.current = f(transcriptRef.current);
        setTranscript(transcriptRef.current);
      },
      () => transcriptRef.current,
      abort.signal,
      setStreamError,
    );
    return () => abort.abort();
  }, [id]);

  const blocks = useMemo(() => buildBlocks(transcript), [transcript]);
  const state = detail?.state;
  const closed = detail?.closed ?? false;

  const act = async (action: string, body: Record<string, unknown> = {}) => {
    setBusy(true);
    setActionError(null);
    try {
      await postJson(`/api/conversations/${encodeURIComponent(id)}/${action}`, body);
      return true;
    } catch (err) {
      setActionError(`${action}: ${(err as Error).message}`);
      return false;
    } finally {
      setBusy(false);
      void refresh();
    }
  };

  const send = async (e: Event) => {
    e.preventDefault();
    if (!message.trim()) {
      setActionError('send: write a message first');
      return;
    }
    // A paused conversation keeps the message until Resume; a stopped one runs on it.
    const run = state ? !['paused', 'running', 'waiting_for_confirmation'].includes(state.status) : false;
    if (await act('send', { text: message, ...(run ? { run: true } : {}) })) setMessage('');
  };

  const waiting = state?.status === 'waiting_for_confirmation';
  const m = state?.metrics;
  // Until the first answer, nothing is known: every control waits.
  const can = detail
    ? enabledControls({ status: state?.status, closed, pendingMessages: state?.pendingMessages })
    : enabledControls({ status: null, closed: true });

  return (
    <main class="conversation" aria-label={`Conversation ${id}`}>
      <div class="conv-head">
        <h2 class="conv-id">{id}</h2>
        {state ? <StatusBadge status={state.status} closed={closed} /> : null}
        {detail ? (
          <a class="temporal-link" href={detail.temporalUrl} target="_blank" rel="noreferrer noopener">
            Open in Temporal Web UI
          </a>
        ) : null}
      </div>
      {m ? (
        <p class="metrics">
          cost {cost(m.accumulatedCost)} · tokens {m.promptTokens} in / {m.completionTokens} out · {m.llmCalls} model calls
          {` · ${modelName(state?.model)}`}
          {state?.tenant ? ` · tenant ${state.tenant}` : ''}
          {state?.pendingMessages ? ` · ${state.pendingMessages} message(s) waiting for Resume` : ''}
        </p>
      ) : null}
      {warnings.map((w, i) => (
        <p class="note" key={i}>
          {w}
        </p>
      ))}
      {state?.lastError ? <p class="event-error">last error: {state.lastError}</p> : null}
      {state?.waitingForHost ? <p class="note">waiting for workspace host {state.waitingForHost}: start `faheem worker` there</p> : null}
      {detail?.stateError ? <p class="note">live state unavailable: {detail.stateError}</p> : null}
      {detailError ? (
        <p class="error" role="alert">
          {detailError}
        </p>
      ) : null}

      <div class="controls">
        <button
          type="button"
          disabled={busy || !can.pause}
          aria-describedby="pause-help"
          title="Stop now: the model call under way is dropped; a command that runs now finishes first"
          onClick={() => void act('pause')}
        >
          Pause
        </button>
        <button
          type="button"
          disabled={busy || !can.pauseNow}
          aria-describedby="pause-help"
          title="Stop at once: the running command is interrupted too"
          onClick={() => void act('pause', { now: true })}
        >
          Pause now
        </button>
        <button type="button" disabled={busy || !can.resume} onClick={() => void act('resume')}>
          Resume
        </button>
        <button type="button" disabled={busy || !can.close} onClick={() => void act('close')}>
          Close
        </button>
      </div>
      <p class="hint" id="pause-help">
        <strong>Pause</strong> stops the agent: the model call under way is dropped, a command that runs now finishes first.{' '}
        <strong>Pause now</strong> also interrupts the running command. A message sent while paused waits for <strong>Resume</strong>.
      </p>

      {waiting ? (
        <div class="approval">
          <p>Waiting for confirmation:</p>
          <ul>
            {(state?.pendingActions ?? []).map((a) => (
              <li key={a.toolCallId}>
                <span class="tool-name">{a.tool}</span> <code>{JSON.stringify(a.arguments)}</code>
              </li>
            ))}
          </ul>
          <div class="approval-row">
            <button type="button" disabled={busy || !can.approve} onClick={() => void act('approve')}>
              Approve
            </button>
            <label for="reject-reason">Reason</label>
            <input id="reject-reason" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
            <button
              type="button"
              disabled={busy || !can.reject}
              onClick={() =>
                void act('reject', { reason }).then((ok) => {
                  if (ok) setReason('');
                })
              }
            >
              Reject
            </button>
          </div>
        </div>
      ) : null}

      {actionError ? (
        <p class="error" role="alert">
          {actionError}
        </p>
      ) : null}

      <form class="send" onSubmit={(e) => void send(e)}>
        <label for="message">Message</label>
        <textarea
          id="message"
          rows={3}
          value={message}
          disabled={!can.send}
          onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" disabled={busy || !can.send}>
          Send
        </button>
      </form>

      {detail?.tree.length ? (
        <section class="subagents">
          <h3>Sub-agents</h3>
          <Tree nodes={detail.tree} />
        </section>
      ) : null}

      <section class="transcript" aria-label="Transcript">
        {streamError ? <p class="note">{streamError}</p> : null}
        {blocks.map((b) => (
          <BlockView key={b.key} b={b} conversationId={id} />
        ))}
      </section>
    </main>
  );
}

/** The form's defaults, from the console (its own working folder). */
interface Defaults {
  workspace: string;
}

/** "New conversation": what `faheem start` takes; the server checks it and starts it the same way. */
function NewConversation() {
  const [message, setMessage] = useState('');
  const [workspace, setWorkspace] = useState('');
  const [model, setModel] = useState('');
  const [confirm, setConfirm] = useState('never');
  const [id, setId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    void getJson<Defaults>('/api/defaults').then(
      (d) => setWorkspace((w) => w || d.workspace),
      () => undefined,
    );
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const started = await postJson<{ id: string; warnings: string[] }>('/api/conversations', { message, workspace, model, confirm, id });
      if (started.warnings.length) sessionStorage.setItem(`faheem-warnings:${started.id}`, JSON.stringify(started.warnings));
      location.hash = `#/c/${encodeURIComponent(started.id)}`;
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="conversation new" aria-label="New conversation">
      <h2>New conversation</h2>
      <form class="new-form" onSubmit={(e) => void submit(e)}>
        <label for="new-message">First message</label>
        <textarea
          id="new-message"
          rows={4}
          value={message}
          placeholder="What should the agent do?"
          onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
        />
        <label for="new-workspace">Workspace</label>
        <input
          id="new-workspace"
          value={workspace}
          placeholder="/absolute/path/to/the/project"
          onInput={(e) => setWorkspace((e.target as HTMLInputElement).value)}
        />
        <label for="new-model">Model</label>
        <input
          id="new-model"
          value={model}
          placeholder="the worker's model (LLM_MODEL), or e.g. openai/gpt-4o"
          onInput={(e) => setModel((e.target as HTMLInputElement).value)}
        />
        <label for="new-confirm">Ask before actions</label>
        <select id="new-confirm" value={confirm} onChange={(e) => setConfirm((e.target as HTMLSelectElement).value)}>
          <option value="never">never</option>
          <option value="risky">risky ones</option>
          <option value="always">always</option>
        </select>
        <label for="new-id">Conversation id</label>
        <input id="new-id" value={id} placeholder="generated" onInput={(e) => setId((e.target as HTMLInputElement).value)} />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          Start
        </button>
      </form>
    </main>
  );
}

function App() {
  const [route, setRoute] = useState<Route>(routeFromHash());
  useEffect(() => {
    const on = () => setRoute(routeFromHash());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const selected = route.kind === 'conversation' ? route.id : null;
  return (
    <div class="layout">
      <header class="top">
        <h1>faheem console</h1>
      </header>
      <ConversationList selected={selected} />
      {route.kind === 'conversation' ? (
        <ConversationView id={route.id} key={route.id} />
      ) : route.kind === 'new' ? (
        <NewConversation />
      ) : (
        <main class="conversation empty">
          <p class="muted">
            Choose a conversation, or start a <a href="#/new">new one</a>.
          </p>
        </main>
      )}
    </div>
  );
}

setToken(takeToken());
render(<App />, document.getElementById('app')!);
