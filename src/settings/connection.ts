// The connection area of the settings: where Temporal is, which namespace, the task queues, the
// HTTP API the quick paths may use, and whether Temporal's envconfig has more to say (TLS, an API
// key, a profile). Built once at an entry point from its Settings and passed down. No zod and no
// SDK here: the quick paths of the CLI (src/cli/quick.ts) load this module too.
import os from 'node:os';
import type { Settings } from '../environment.js';
import { DEFAULTS } from '../core/types.js';

/** How a process reaches Temporal, and the queues it uses there. */
export interface ConnectionSettings {
  /** TEMPORAL_ADDRESS (host:port), default `localhost:7233`; envconfig's own address wins over it. */
  readonly address: string;
  /** TEMPORAL_NAMESPACE, default `default`; envconfig's own namespace wins over it. */
  readonly namespace: string;
  /**
   * Whether Temporal's envconfig is told more than the address and namespace: TEMPORAL_API_KEY,
   * TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE, TEMPORAL_TLS, TEMPORAL_TLS_* or TEMPORAL_GRPC_META_* is set.
   */
  readonly envconfig: boolean;
  /** TEMPORAL_CONFIG_FILE: envconfig's file of profiles, when named. */
  readonly configFile: string | undefined;
  /** FAHEEM_TASK_QUEUE, default `faheem`: conversations and model calls. */
  readonly taskQueue: string;
  /** FAHEEM_HOST_ID, default the hostname: this host's id. */
  readonly hostId: string;
  /** FAHEEM_TOOL_TASK_QUEUE, default `<taskQueue>-tools@<hostId>`: this host's tool calls. */
  readonly toolTaskQueue: string;
  /** FAHEEM_TEMPORAL_HTTP: Temporal's HTTP API (`http://host:port`), `off`, or undefined (find it). */
  readonly httpApi: string | undefined;
  /** FAHEEM_TEMPORAL_HTTP_HOST: the Host header the HTTP API wants. */
  readonly httpApiHost: string | undefined;
  /** TEMPORAL_UI_URL, default `http://localhost:8233`, without a trailing slash. */
  readonly temporalUiUrl: string;
  /** TEMPORAL_CLI: the Temporal CLI binary that runs a dev server; undefined: find one. */
  readonly temporalCli: string | undefined;
}

// What Temporal's envconfig reads besides the address and namespace.
const ENVCONFIG_NAMES = ['TEMPORAL_API_KEY', 'TEMPORAL_PROFILE', 'TEMPORAL_CONFIG_FILE', 'TEMPORAL_TLS'];
const ENVCONFIG_PREFIXES = ['TEMPORAL_TLS_', 'TEMPORAL_GRPC_META_'];

/** A set, non-blank value; undefined otherwise (as readSettings drops a blank one). */
function present(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * The connection settings `settings` gives, defaults applied. Takes checked Settings (readSettings);
 * a blank value counts as unset, so the quick paths may hand it their raw environment.
 */
export function connectionSettings(settings: Settings): ConnectionSettings {
  const all = settings as Readonly<Record<string, string | undefined>>;
  const envconfig = Object.keys(all).some(
    (name) => present(all[name]) !== undefined && (ENVCONFIG_NAMES.includes(name) || ENVCONFIG_PREFIXES.some((p) => name.startsWith(p))),
  );
  const taskQueue = present(settings.FAHEEM_TASK_QUEUE) ?? DEFAULTS.taskQueue;
  const hostId = present(settings.FAHEEM_HOST_ID) ?? os.hostname();
  return {
    address: present(settings.TEMPORAL_ADDRESS) ?? 'localhost:7233',
    namespace: present(settings.TEMPORAL_NAMESPACE) ?? 'default',
    envconfig,
    configFile: present(settings.TEMPORAL_CONFIG_FILE),
    taskQueue,
    hostId,
    toolTaskQueue: present(settings.FAHEEM_TOOL_TASK_QUEUE) ?? `${taskQueue}-tools@${hostId}`,
    httpApi: present(settings.FAHEEM_TEMPORAL_HTTP),
    httpApiHost: present(settings.FAHEEM_TEMPORAL_HTTP_HOST),
    temporalUiUrl: (present(settings.TEMPORAL_UI_URL) ?? 'http://localhost:8233').replace(/\/+$/, ''),
    temporalCli: present(settings.TEMPORAL_CLI),
  };
}
