// Node's module compile cache for the `faheem` command (the CLI, the worker, `faheem acp`): the
// compiled code of the modules it loads is kept on disk, so the next start skips most of the parsing
// and compiling. Node 22.1 and later have it; on Node 20 this does nothing.
import nodeModule from 'node:module';
import type { CompileCacheSettings } from '../settings/compile-cache.js';

export { compileCacheSettings, type CompileCacheSettings } from '../settings/compile-cache.js';

/** The part of `node:module` this uses; absent before Node 22.1 (and from the Node 20 types). */
interface CompileCacheApi {
  enableCompileCache?: (dir?: string) => { status: number; message?: string; directory?: string };
  flushCompileCache?: () => void;
  constants?: { compileCacheStatus?: { ENABLED: number; ALREADY_ENABLED: number } };
}

const api = nodeModule as unknown as CompileCacheApi;

/**
 * Turns on the module compile cache for this process when the runtime has it, in
 * `cache.dir`; the modules imported afterwards use it. Never throws: on Node 20, with
 * `NODE_DISABLE_COMPILE_CACHE` set, or when the folder cannot be made or written, the process simply
 * runs without it. When `NODE_COMPILE_CACHE` is set, Node has already turned it on in that folder.
 *
 * @returns the folder in use, or undefined when the cache is off
 */
export function enableCompileCache(cache: CompileCacheSettings): string | undefined {
  if (typeof api.enableCompileCache !== 'function' || cache.disabled) return undefined;
  try {
    // Node makes the folder; one it cannot make or write leaves the cache off (status FAILED).
    const result = api.enableCompileCache(cache.chosenByNode ? undefined : cache.dir);
    const status = api.constants?.compileCacheStatus;
    const on = status ? result.status === status.ENABLED || result.status === status.ALREADY_ENABLED : false;
    return on ? result.directory : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes what the compile cache has gathered so far (Node 22.10 and later). Node writes it at a
 * normal exit anyway; a long-lived process (the worker) calls this once it has started, so a worker
 * that is killed still leaves a warm cache for the next.
 */
export function flushCompileCache(): void {
  try {
    api.flushCompileCache?.();
  } catch {
    // the cache is an optimisation: a failed write only means a slower next start
  }
}
