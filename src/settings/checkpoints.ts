// The checkpoints area of the settings: where a worker's shadow repositories live and how they are
// taken. Built once at the worker's entry point and passed to the checkpoint store.
import type { Settings } from '../environment.js';
import { faheemHome } from './home.js';

/** The checkpoint settings. */
export interface CheckpointSettings {
  /** FAHEEM_HOME (default `~/.faheem`): the shadow repositories are under its `checkpoints/`. */
  readonly home: string;
  /** FAHEEM_CHECKPOINT_MAX_FILE_BYTES: larger files are left out; undefined: the store's default (10 MiB). */
  readonly maxFileBytes: number | undefined;
  /** FAHEEM_CHECKPOINT_BORROW (default on): borrow objects from the workspace's own git repository. */
  readonly borrow: boolean;
  /** FAHEEM_CHECKPOINT_WATCH (default on): a file watcher says what changed; off: git looks every step. */
  readonly watch: boolean;
  /** FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES (tests only): the process dies after this many writes. */
  readonly killAfterWrites: number | undefined;
}

/** The checkpoint settings `settings` gives, defaults applied; a cap that is not a positive number is no cap. */
export function checkpointSettings(settings: Settings): CheckpointSettings {
  const cap = Number(settings.FAHEEM_CHECKPOINT_MAX_FILE_BYTES);
  const killAfterWrites = Number(settings.FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES);
  return {
    home: faheemHome(settings),
    maxFileBytes: Number.isFinite(cap) && cap > 0 ? cap : undefined,
    borrow: settings.FAHEEM_CHECKPOINT_BORROW !== '0',
    watch: settings.FAHEEM_CHECKPOINT_WATCH !== '0',
    killAfterWrites: killAfterWrites > 0 ? killAfterWrites : undefined,
  };
}
