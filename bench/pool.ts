// What shipping checkpoints to the object store costs (figures, not asserts): `npm run bench:pool`.
// In one process, no Temporal server: a pool host's shadow repository and the store, as the worker
// runs them.
//  - ship: per step, a one-file change in a 10-file and in a 10,000-file workspace: the CPU (this
//    process and git's, from /proc; not the S3 server's, printed apart) and the bytes shipped, with
//    the snapshot alone beside it, twice (the second time is the noise: an A/A difference), and the
//    shipping hook's own CPU with its git processes;
//  - restore: a claim on another host that restores the 10,000-file workspace from the store.
// The store: a folder (default), or SeaweedFS's S3 (BENCH_POOL_S3=1, built by scripts/build-seaweedfs.sh).
// BENCH_POOL_STEPS (2 × FULL_BUNDLE_EVERY + 20) sets the steps measured.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CheckpointStore } from '../src/time-travel/shadow-repo.js';
import { FileObjectStore, objectStore, type ObjectStore } from '../src/storage/object-store.js';
import { claimPoolHost, shipAfterSnapshot, type PoolSettings } from '../src/pool/pool.js';
import { FULL_BUNDLE_EVERY } from '../src/pool/shipping.js';
import { startSeaweedS3, type SeaweedS3 } from '../test/support/seaweedfs.js';
import { cpuMs, reapedChildrenCpuMs } from './cpu.js';
import { storeSettings } from '../src/settings/store.js';

// More than twice FULL_BUNDLE_EVERY: the measured steps include the chain's folds.
const STEPS = Number(process.env.BENCH_POOL_STEPS ?? 2 * FULL_BUNDLE_EVERY + 20);
const WARM_STEPS = 20;
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

async function storeBytes(store: ObjectStore, prefix: string): Promise<number> {
  let total = 0;
  for (const key of await store.list(prefix)) total += (await store.head(key))?.size ?? 0;
  return total;
}

async function fill(dir: string, files: number): Promise<void> {
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) await mkdir(sub, { recursive: true });
    await writeFile(path.join(sub, `f${i}.txt`), `file ${i}\n${'x'.repeat(200)}\n`);
  }
}

async function ship(root: string, store: ObjectStore, files: number): Promise<void> {
  const id = `bench-${files}`;
  const settings = (hostId: string): PoolSettings => ({
    pool: 'bench',
    hostId,
    workspacesDir: path.join(root, hostId, 'ws'),
    store,
    codec: undefined,
  });
  // Shipping's own CPU, measured around the hook: this process's threads, and the git processes
  // it waited for (a fold's, a full pack's; a step's pack is written in-process).
  let hookCpuMs = 0;
  let hookGitMs = 0;
  const timed =
    (hook: ReturnType<typeof shipAfterSnapshot>): typeof hook =>
    async (...args) => {
      const c0 = process.cpuUsage();
      const git0 = reapedChildrenCpuMs();
      try {
        return await hook(...args);
      } finally {
        const c = process.cpuUsage(c0);
        hookCpuMs += (c.user + c.system) / 1000;
        hookGitMs += reapedChildrenCpuMs() - git0;
      }
    };
  const host = (hostId: string, shipping: boolean) =>
    new CheckpointStore({
      home: path.join(root, hostId, 'home'),
      env: process.env,
      watch: false,
      ...(shipping ? { afterSnapshot: timed(shipAfterSnapshot(settings(hostId), {})) } : {}),
    });
  const a = host('a', true);
  const claim = await claimPoolHost(settings('a'), a, 'q', { conversationId: id, pool: 'bench' }, {});
  await fill(claim.workspace, files);
  let t = performance.now();
  const repo = await a.open(claim.workspace);
  await repo.snapshot(id, 0);
  const firstMs = performance.now() - t;
  const firstBytes = await storeBytes(store, `conversations/${id}/`);

  // The same steps without shipping, in copies of the workspace: the yardstick, and a second one
  // whose difference from the first is the noise (the sanity line: an A/A difference).
  const plainHost = host('plain', false);
  const copy = async (name: string) => {
    const dir = path.join(root, name, id);
    await mkdir(dir, { recursive: true });
    await fill(dir, files);
    const r = await plainHost.open(dir);
    await r.snapshot(id, 0);
    return { dir, repo: r };
  };
  const plain = await copy('plain');
  const again = await copy('again');

  // The sides take turns in rounds of ten steps, so that none gets a warmer JIT or a quieter minute.
  const sides = { shipped: { cpu: 0, wall: 0, s3: 0 }, yardstick: { cpu: 0, wall: 0, s3: 0 }, again: { cpu: 0, wall: 0, s3: 0 } };
  const measure = async (dir: string, r: typeof repo, from: number, to: number, into: (typeof sides)['shipped']) => {
    const cpu0 = hostCpuMs();
    const s30 = cpuMs(s3?.pid);
    const t0 = performance.now();
    for (let step = from; step <= to; step++) {
      await writeFile(path.join(dir, 'd0', 'f0.txt'), `changed at step ${step}\n`);
      await r.snapshot(id, step);
    }
    into.cpu += (hostCpuMs() - cpu0) / STEPS;
    into.wall += (performance.now() - t0) / STEPS;
    into.s3 += (cpuMs(s3?.pid) - s30) / STEPS;
  };
  // Twenty steps first, not counted: the shipping code (the AWS SDK's above all) runs warm in a worker.
  const warm = { cpu: 0, wall: 0, s3: 0 };
  await measure(claim.workspace, repo, 1, WARM_STEPS, warm);
  await measure(plain.dir, plain.repo, 1, WARM_STEPS, warm);
  await measure(again.dir, again.repo, 1, WARM_STEPS, warm);
  const before = await storeBytes(store, `conversations/${id}/`);
  hookCpuMs = 0;
  hookGitMs = 0;
  for (let from = WARM_STEPS + 1; from <= WARM_STEPS + STEPS; from += 10) {
    const to = Math.min(WARM_STEPS + STEPS, from + 9);
    // The order turns each round: no side always follows the shipped one (and its garbage).
    const round: (() => Promise<void>)[] = [
      () => measure(claim.workspace, repo, from, to, sides.shipped),
      () => measure(plain.dir, plain.repo, from, to, sides.yardstick),
      () => measure(again.dir, again.repo, from, to, sides.again),
    ];
    const turn = ((from - WARM_STEPS - 1) / 10) % round.length;
    for (const side of [...round.slice(turn), ...round.slice(0, turn)]) await side();
  }
  const { shipped, yardstick, again: aa } = sides;
  const hook = hookCpuMs / STEPS;
  const hookGit = hookGitMs / STEPS;
  const bytes = ((await storeBytes(store, `conversations/${id}/`)) - before) / STEPS;
  console.log(
    `| ${files} | ${fmt(firstMs, 0)} ms, ${fmt(firstBytes / 1024, 0)} KiB | ${fmt(yardstick.cpu)} | ${fmt(shipped.cpu)} | ` +
      `${fmt(shipped.cpu - yardstick.cpu)} | ${fmt(aa.cpu - yardstick.cpu)} | ${fmt(hook + hookGit, 2)} (${fmt(hookGit, 2)} git) | ${fmt(shipped.wall - yardstick.wall)} | ${fmt(bytes / 1024, 1)} KiB | ${s3 ? fmt(shipped.s3) : '—'} |`,
  );

  if (files >= 10_000) {
    const b = host('b', true);
    const cpu0 = hostCpuMs();
    t = performance.now();
    const moved = await claimPoolHost(settings('b'), b, 'q', { conversationId: id, pool: 'bench', lastStep: WARM_STEPS + STEPS }, {});
    restoreLine = `restore of the ${files}-file workspace on another host (claim: fence, packs, checkout): ${fmt(performance.now() - t, 0)} ms wall, ${fmt(hostCpuMs() - cpu0, 0)} ms CPU (restored from step ${moved.restoredFromStep})`;
  }
}

let restoreLine = '';
/** This process and its git children: the host's CPU, without the S3 server (a child here, a machine of its own in a deployment). */
const hostCpuMs = () => cpuMs(process.pid) - cpuMs(s3?.pid ?? -1);
const root = await mkdtemp(path.join(os.tmpdir(), 'faheem-bench-pool-'));
let s3: SeaweedS3 | undefined;
try {
  let store: ObjectStore;
  if (process.env.BENCH_POOL_S3 === '1') {
    s3 = await startSeaweedS3('bench-pool');
    store = objectStore(storeSettings({ ...s3.env, FAHEEM_OBJECT_STORE: `s3://${s3.bucket}/bench` }))!;
  } else {
    store = new FileObjectStore(path.join(root, 'store'));
  }
  console.log(`store ${store.location}, ${STEPS} steps of a one-file change, ${os.cpus().length} cores`);
  console.log(
    '| files | first (full) shipment | CPU ms a step, snapshot only | with shipping | shipping adds (CPU ms) | A/A: the yardstick again (CPU ms) | the shipping hook (CPU ms, with its git) | shipping adds (wall ms) | bytes a step | the S3 server (CPU ms a step) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const files of [10, 10_000]) await ship(root, store, files);
  console.log(restoreLine);
} finally {
  await s3?.stop();
  await rm(root, { recursive: true, force: true });
}
