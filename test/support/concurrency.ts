// How many test files run at once, from the cores this process may use.

/**
 * Files a layer runs at once on `cores` cores (os.availableParallelism(), which honours `taskset`).
 * Unit and workflow files mostly wait (on the dev server, a timer, a child process): two per core
 * (on two cores, two at a time left more than half the CPU idle: 41 s against 24 s at four). An
 * e2e file spends much of its time waiting on other processes (workers, the CLI, the server): half
 * as many again as cores, two at least (two on one core, three on two). A positive `override`
 * (FAHEEM_E2E_CONCURRENCY) sets the e2e figure.
 */
export function concurrency(layer: 'unit' | 'workflow' | 'e2e', cores: number, override?: string): number {
  if (layer === 'e2e' && Number(override) > 0) return Math.floor(Number(override));
  return layer === 'e2e' ? Math.max(2, Math.round(cores * 1.5)) : Math.max(2, cores * 2);
}
