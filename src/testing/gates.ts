// Named gates for the scripted model servers: a scripted reply that names a gate is held (its stream
// open, when streamed) until the test releases that gate, so that a test orders "the pause lands
// before the reply ends" by a condition it controls, never by a reply delay that a busy machine
// can outrun.
import type { ServerResponse } from 'node:http';

/** What a gate holds: a server's record of one request, marked with the gate it is held at. */
export interface GatedRequest {
  /** The gate this request was held at, if any. */
  heldAt?: string;
}

/** The gates of one scripted server: held requests, releases, and waits for a request to arrive at a gate. */
export interface Gates<R extends GatedRequest = GatedRequest> {
  /**
   * Opens the gate `name`: every reply held at it goes on, and later replies that name it are not
   * held (until {@link Gates.hold} closes it again). Releasing a gate nobody waits at is fine.
   */
  release(name: string): void;
  /** Closes the gate `name` again (a released gate stays open until then). */
  hold(name: string): void;
  /** The requests held at `name` right now (their replies not yet sent, their clients still there). */
  held(name: string): R[];
  /**
   * Resolves with the request once one is held at `name` (at once if one is held already); rejects
   * after `timeoutMs` (default 60 s: a deadline for a loaded machine, not a timing).
   */
  reached(name: string, timeoutMs?: number): Promise<R>;
}

/** The server side of {@link Gates}: what the scripted servers call while answering. */
export interface GateKeeper<R extends GatedRequest = GatedRequest> extends Gates<R> {
  /**
   * Holds `recorded` at `name` until the gate is released (resolves true) or the client goes away
   * (resolves false: a pause or an abort cancelled the call).
   */
  pass(name: string, recorded: R, res: ServerResponse): Promise<boolean>;
}

/** Makes the gates of one scripted server (each server has its own). */
export function createGates<R extends GatedRequest>(): GateKeeper<R> {
  const open = new Set<string>();
  const holding = new Map<string, { recorded: R; go: () => void }[]>();
  const arrivals = new Map<string, ((r: R) => void)[]>();
  const list = (name: string) => holding.get(name) ?? [];
  return {
    release(name) {
      open.add(name);
      const waiting = list(name);
      holding.delete(name);
      for (const w of waiting) w.go();
    },
    hold(name) {
      open.delete(name);
    },
    held: (name) => list(name).map((w) => w.recorded),
    reached(name, timeoutMs = 60_000) {
      const now = list(name)[0];
      if (now) return Promise.resolve(now.recorded);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          arrivals.set(
            name,
            (arrivals.get(name) ?? []).filter((f) => f !== arrive),
          );
          reject(new Error(`no request reached the gate "${name}" within ${timeoutMs} ms`));
        }, timeoutMs);
        const arrive = (r: R) => {
          clearTimeout(timer);
          resolve(r);
        };
        arrivals.set(name, [...(arrivals.get(name) ?? []), arrive]);
      });
    },
    pass(name, recorded, res) {
      if (open.has(name)) return Promise.resolve(!res.destroyed);
      if (res.destroyed) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const entry = {
          recorded,
          go: () => {
            res.off('close', gone);
            resolve(!res.destroyed);
          },
        };
        const gone = () => {
          holding.set(
            name,
            list(name).filter((w) => w !== entry),
          );
          resolve(false);
        };
        res.on('close', gone);
        recorded.heldAt = name;
        holding.set(name, [...list(name), entry]);
        const waiters = arrivals.get(name) ?? [];
        arrivals.delete(name);
        for (const w of waiters) w(recorded);
      });
    },
  };
}
