// What a service opens when it listens beyond loopback: one warning per service, naming what
// becomes reachable and to whom. Pure, so each wording is unit-tested (test/unit/server/exposure.test.ts).
/** Whether `host` is a loopback address (or name): only this machine can connect. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The services that can listen on another address. */
export type ExposedService = 'server' | 'console' | 'codec-server' | 'metrics' | 'api';

const REACHABLE: Record<ExposedService, string> = {
  server:
    "Temporal's API, with no authentication: whoever reaches it can start, signal and read every conversation, and a conversation's " +
    'MCP config runs commands on the workers (code execution on every worker); and the Web UI, which shows every conversation',
  console: 'the console: whoever holds its token (it is in the printed URL, sent over plain HTTP) controls every conversation',
  'codec-server': 'the codec server: whoever holds its token can decrypt (and encrypt) every payload with your keys',
  api: 'the team API: whoever holds a key acts for its tenant; the API itself answers anyone (its OpenAPI document, its 401s)',
  metrics: "the worker's Prometheus metrics (model names, tool names, token counts and costs), without authentication",
};

/**
 * The warning for `service` listening on `host`, or undefined on loopback. `flag` names the option
 * that chose the address (`--ip`, `--host`, `--metrics-host`).
 */
export function exposureWarning(service: ExposedService, host: string, flag: string): string | undefined {
  if (isLoopback(host)) return undefined;
  const where = host === '0.0.0.0' || host === '::' || host === '[::]' ? 'every network interface' : host;
  return `warning: ${flag} ${host} listens on ${where}, beyond this machine. Reachable from the network: ${REACHABLE[service]}. Keep it on 127.0.0.1 unless a firewall or a private network stands in front.`;
}
