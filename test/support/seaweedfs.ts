// A real S3 server for the tests that need one: SeaweedFS's `weed server -s3` (master, volume, filer
// and the S3 gateway in one process) on free ports, in a temporary folder, with one admin identity
// from an S3 config file. The binary is built once from the Go module proxy into ~/.cache/faheem
// (scripts/build-seaweedfs.sh, which .ci/run runs first; FAHEEM_WEED names another binary).
import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { execa, type ResultPromise } from 'execa';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { s3ClientConfig } from '../../src/storage/object-store.js';
import { freePort, ROOT, waitFor } from './harness.js';
import { s3Settings } from '../../src/settings/store.js';

/** A running SeaweedFS with its S3 gateway. */
export interface SeaweedS3 {
  /** The S3 endpoint (http://127.0.0.1:<port>). */
  endpoint: string;
  /** The bucket made for the test. */
  bucket: string;
  /** The standard AWS variables a worker or client needs to reach it. */
  env: Record<string, string>;
  /** Its process (a bench counts its CPU). */
  pid: number | undefined;
  /** Its output so far (for a failing test's message). */
  output(): string;
  stop(): Promise<void>;
}

/** The weed binary: FAHEEM_WEED, else the cached build (built now when the cache lacks it). */
export async function weedBinary(): Promise<string> {
  if (process.env.FAHEEM_WEED) return process.env.FAHEEM_WEED;
  const { stdout } = await execa('bash', [path.join(ROOT, 'scripts', 'build-seaweedfs.sh')], { cwd: ROOT });
  return stdout.trim().split('\n').pop()!;
}

/** Starts SeaweedFS on free ports with a bucket of its own; `stop()` kills it and removes its folder. */
export async function startSeaweedS3(bucket = 'faheem-test'): Promise<SeaweedS3> {
  const weed = await weedBinary();
  const dir = await mkdtemp(path.join(tmpdir(), 'faheem-weed-'));
  const accessKey = `faheem${randomBytes(6).toString('hex')}`;
  const secretKey = randomBytes(20).toString('hex');
  const config = path.join(dir, 's3.json');
  await writeFile(
    config,
    JSON.stringify({
      identities: [{ name: 'faheem', credentials: [{ accessKey, secretKey }], actions: ['Admin', 'Read', 'List', 'Tagging', 'Write'] }],
    }),
  );
  // Every port named: the defaults are fixed numbers, and gRPC ports default to http + 10000.
  const ports = await Promise.all(Array.from({ length: 8 }, () => freePort()));
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = ports as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  let out = '';
  const child: ResultPromise = execa(
    weed,
    [
      `-logdir=${dir}`, // its logs, else in /tmp
      'server',
      `-dir=${dir}`,
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-master.port=${master}`,
      `-master.port.grpc=${masterGrpc}`,
      '-master.telemetry=false',
      '-master.volumeSizeLimitMB=64',
      `-volume.port=${volume}`,
      `-volume.port.grpc=${volumeGrpc}`,
      '-volume.max=0',
      '-filer',
      `-filer.port=${filer}`,
      `-filer.port.grpc=${filerGrpc}`,
      '-s3',
      `-s3.port=${s3}`,
      `-s3.port.grpc=${s3Grpc}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      `-s3.config=${config}`,
      `-filer.localSocket=${path.join(dir, 'filer.sock')}`,
      `-s3.localSocket=${path.join(dir, 's3.sock')}`,
    ],
    { all: true, reject: false, cwd: dir },
  );
  child.all?.on('data', (d: Buffer) => (out += d.toString()));
  const endpoint = `http://127.0.0.1:${s3}`;
  const env = { AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: accessKey, AWS_SECRET_ACCESS_KEY: secretKey, AWS_REGION: 'us-east-1' };
  // Each server's gRPC socket: always in /tmp (weed server names no flag for them).
  const sockets = Object.entries({ master: masterGrpc, volume: volumeGrpc, filer: filerGrpc, s3: s3Grpc }).map(([name, port]) =>
    path.join('/tmp', `seaweedfs-${name}-grpc-${port}.sock`),
  );
  const stop = async () => {
    child.kill('SIGKILL');
    await child;
    await Promise.all([dir, ...sockets].map((p) => rm(p, { recursive: true, force: true })));
  };
  const client = new S3Client(s3ClientConfig(s3Settings(env)));
  try {
    // Up when the gateway answers an authenticated call and the bucket can be made (the volume
    // server registers with the master a moment after the gateway listens).
    await waitFor(
      'SeaweedFS to answer on S3',
      async () => {
        if (child.exitCode !== null) throw new Error(`weed exited (${child.exitCode}):\n${out}`);
        return client
          .send(new ListBucketsCommand({}))
          .then(() => client.send(new CreateBucketCommand({ Bucket: bucket })))
          .then(() => true)
          .catch((err: { name?: string }) => err?.name === 'BucketAlreadyOwnedByYou' || err?.name === 'BucketAlreadyExists');
      },
      120_000,
    );
  } catch (err) {
    await stop();
    throw err;
  } finally {
    client.destroy();
  }
  return { endpoint, bucket, env, pid: child.pid, output: () => out, stop };
}
