// Images checked (format from the magic bytes, 5 MB, 10 a message) and stored by content hash: in
// clear without a key, encrypted and bound to their key with one, and checked against the hash.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { checkImage, sniffImage } from '../../../src/images/sniff.js';
import { putImage, readImage, sha256Of } from '../../../src/images/store.js';
import { storeImages } from '../../../src/images/inputs.js';
import { InvalidRequestError } from '../../../src/core/errors.js';
import { checkImageRefs, MAX_IMAGE_BYTES } from '../../../src/images/workflow/image-refs.js';
import { storeSettings } from '../../../src/settings/store.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a464946', 'hex');
const GIF = Buffer.from('474946383961010001000000', 'hex');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([8, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);

test('the format comes from the magic bytes, never the name', () => {
  assert.equal(sniffImage(PNG), 'image/png');
  assert.equal(sniffImage(JPEG), 'image/jpeg');
  assert.equal(sniffImage(GIF), 'image/gif');
  assert.equal(sniffImage(WEBP), 'image/webp');
  assert.equal(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), undefined);
  assert.equal(sniffImage(Buffer.from('RIFF\0\0\0\0WAVE')), undefined);
  assert.throws(() => checkImage(Buffer.from('%PDF-1.7'), 'doc.png'), /doc\.png is not a PNG, JPEG, GIF or WebP image/);
  assert.throws(() => checkImage(PNG, 'x', 'image/jpeg'), /given as image\/jpeg, but its bytes are image\/png/);
  assert.equal(checkImage(JPEG, 'x', 'image/jpg'), 'image/jpeg');
});

test('over 5 MB is refused with the sizes said', () => {
  const big = Buffer.alloc(MAX_IMAGE_BYTES + 1);
  PNG.copy(big);
  assert.throws(() => checkImage(big, 'big.png'), /big\.png is 5242881 bytes; an image may have at most 5242880 bytes \(5 MB\)/);
});

test('the workflow takes well-formed references only, at most 10 a message', () => {
  const ok = { sha256: 'c'.repeat(64), mimeType: 'image/png', size: 10, extra: 'dropped' };
  assert.deepEqual(checkImageRefs([ok]), [{ sha256: 'c'.repeat(64), mimeType: 'image/png', size: 10 }]);
  assert.deepEqual(checkImageRefs(undefined), []);
  assert.throws(() => checkImageRefs([{ ...ok, sha256: 'C'.repeat(64) }]), /sha256 must be 64 lowercase hex/);
  assert.throws(() => checkImageRefs([{ ...ok, mimeType: 'text/html' }]), /mimeType must be one of/);
  assert.throws(() => checkImageRefs([{ ...ok, size: MAX_IMAGE_BYTES + 1 }]), /size must be/);
  assert.throws(() => checkImageRefs(Array(11).fill(ok)), /at most 10 images \(it has 11\)/);
});

test('stored by hash in the folder store, once, and read back checked', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-images-'));
  const env = { FAHEEM_HOME: home };
  const ref = await putImage(storeSettings(env), PNG, { name: 'a.png' });
  assert.deepEqual(ref, { sha256: sha256Of(PNG), mimeType: 'image/png', size: PNG.length, name: 'a.png' });
  assert.deepEqual(await readdir(path.join(home, 'objects', 'images')), [ref.sha256]);
  assert.deepEqual(Buffer.from(await readImage(storeSettings(env), ref)), PNG);
  // Altered in the store: refused rather than shown to the model as this image.
  const file = path.join(home, 'objects', 'images', ref.sha256);
  const stored = await readFile(file);
  await writeFile(file, Buffer.from(stored.toString('latin1').replace('IHDR', 'IHDX'), 'latin1'));
  await assert.rejects(readImage(storeSettings(env), ref), /does not match its hash/);
});

test('with an encryption key the stored bytes are ciphertext', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-images-'));
  const env = { FAHEEM_HOME: home, FAHEEM_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
  const ref = await putImage(storeSettings(env), PNG);
  const stored = await readFile(path.join(home, 'objects', 'images', ref.sha256));
  assert.ok(!stored.includes(PNG.subarray(0, 8)), 'the PNG signature is not in the stored object');
  assert.deepEqual(Buffer.from(await readImage(storeSettings(env), ref)), PNG);
  await assert.rejects(readImage(storeSettings({ FAHEEM_HOME: home }), ref), /FAHEEM_ENCRYPTION_KEY/);
});

test('the SDK and CLI inputs: paths and bytes, refused clearly', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-images-'));
  const env = { FAHEEM_HOME: home };
  const file = path.join(home, 'shot.gif');
  await writeFile(file, GIF);
  const refs = await storeImages(storeSettings(env), [file, { data: new Uint8Array(WEBP), mimeType: 'image/webp' }]);
  assert.deepEqual(
    refs.map((r) => [r.mimeType, r.name]),
    [
      ['image/gif', 'shot.gif'],
      ['image/webp', 'image 2'],
    ],
  );
  await assert.rejects(storeImages(storeSettings(env), [path.join(home, 'none.png')]), (err: unknown) => {
    assert.ok(err instanceof InvalidRequestError);
    assert.match(err.message, /^message not sent: .*none\.png: no such file/);
    return true;
  });
  await assert.rejects(storeImages(storeSettings(env), Array(11).fill(file)), /at most 10 images/);
  await assert.rejects(storeImages(storeSettings(env), [{ data: 'not bytes', mimeType: 'image/png' }]), /image 1: give a file path/);
});
