// The compile-cache area of the settings: where Node's module compile cache goes for the `faheem`
// command. bin/faheem.js builds it from the raw environment before anything else loads, so there is
// no zod here (nothing is checked: these variables have no checks).
import path from 'node:path';
import type { Settings } from '../environment.js';
import { faheemHome } from './home.js';

/** The compile-cache settings. */
export interface CompileCacheSettings {
  /** NODE_DISABLE_COMPILE_CACHE is set: no cache. */
  readonly disabled: boolean;
  /** NODE_COMPILE_CACHE is set: Node has turned the cache on in that folder itself. */
  readonly chosenByNode: boolean;
  /** faheem's folder for it: `<FAHEEM_HOME>/compile-cache` (else `~/.faheem/compile-cache`), absolute. */
  readonly dir: string;
}

/** The compile-cache settings `settings` gives (a raw environment will do: a blank value is unset). */
export function compileCacheSettings(settings: Settings): CompileCacheSettings {
  return {
    disabled: Boolean(settings.NODE_DISABLE_COMPILE_CACHE),
    chosenByNode: Boolean(settings.NODE_COMPILE_CACHE),
    dir: path.resolve(faheemHome(settings), 'compile-cache'),
  };
}
