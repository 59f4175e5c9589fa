// The page's calls to the console's API: the token goes in a header, never in a URL after load.
import { applyItem, type StreamItem, type TranscriptState } from './transcript.js';

const TOKEN_KEY = 'faheem-console-token';

/**
 * The token the printed URL carried, moved out of the address bar (and so out of history, bookmarks
 * and screen shares) into this tab's sessionStorage, which a reload keeps; the page's cookie lets
 * the reload load the page itself. A new tab needs the printed URL again.
 */
export function takeToken(): string {
  const params = new URLSearchParams(location.search);
  const fromUrl = params.get('token');
  if (fromUrl === null) return sessionStorage.getItem(TOKEN_KEY) ?? '';
  sessionStorage.setItem(TOKEN_KEY, fromUrl);
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
  return fromUrl;
}

let token = '';
/** Sets the token the calls carry. */
export function setToken(t: string): void {
  token = t;
}

async function answer<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => ({ error: `HTTP ${res.status}` }))) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

/** GET a JSON answer. */
export async function getJson<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: { 'X-Faheem-Token': token } }));
}

/**
 * A conversation's image, fetched with the token (an <img> cannot send the header) and shown
 * through a blob: URL; revoke it when the image goes.
 */
export async function imageUrl(conversationId: string, sha256: string): Promise<string> {
  const res = await fetch(`/api/conversations/${encodeURIComponent(conversationId)}/images/${sha256}`, {
    headers: { 'X-Faheem-Token': token },
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return URL.createObjectURL(await res.blob());
}

/** POST a JSON body; the answer, or an Error with the server's message. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method: 'POST',
      headers: { 'X-Faheem-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

/**
 * Follows a conversation: reads the NDJSON stream and folds each line into the transcript, and
 * reconnects from where it stopped (next event index, next live offset) until the conversation has
 * closed or `signal` aborts.
 */
export async function followConversation(
  id: string,
  update: (f: (s: TranscriptState) => TranscriptState) => void,
  current: () => TranscriptState,
  signal: AbortSignal,
  onError: (message: string | null) => void,
): Promise<void> {
  while (!signal.aborted) {
    const s = current();
    const params = new URLSearchParams({ from: String(s.nextIndex) });
    if (s.liveOffset !== undefined) params.set('liveFrom', String(s.liveOffset + 1));
    let ended = false;
    try {
      const res = await fetch(`/api/conversations/${encodeURIComponent(id)}/follow?${params}`, {
        headers: { 'X-Faheem-Token': token },
        signal,
      });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as { error?: string };
        throw new Error(body.error ?? `HTTP ${res.status}`);
      }
      onError(null);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        const items: StreamItem[] = [];
        for (const line of lines) {
          if (line.trim() === '') continue;
          const item = JSON.parse(line) as StreamItem;
          if ('end' in item) {
            if (item.closed) ended = true;
            if (item.error) onError(item.error);
            continue;
          }
          items.push(item);
        }
        // A read that settled after the view let go of this follow (another conversation shown): drop it.
        if (signal.aborted) return;
        if (items.length) update((st) => items.reduce(applyItem, st));
      }
    } catch (err) {
      if (signal.aborted) return;
      onError(`live updates: ${(err as Error).message}`);
    }
    if (ended) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
