"""Encryption at rest, byte-compatible with the TypeScript codec (src/security/codec.ts).

AES-256-GCM over the whole serialized inner ``Payload``; the outer payload carries the metadata
``encoding: binary/encrypted`` and ``encryption-key-id: <id>``, and its data is the 12-byte IV, the
ciphertext and the 16-byte GCM tag. Keys come from ``FAHEEM_ENCRYPTION_KEY`` (one base64 key whose
id is its fingerprint) or ``FAHEEM_ENCRYPTION_KEYS=id1:key1,id2:key2`` (the first encrypts, all
decrypt), exactly as every TypeScript client and worker reads them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from .errors import DecryptionError, EncryptionConfigError

ENCRYPTED_ENCODING = b"binary/encrypted"
KEY_ID_METADATA = "encryption-key-id"
IV_BYTES = 12
TAG_BYTES = 16
KEY_BYTES = 32
_KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_VARS = "FAHEEM_ENCRYPTION_KEYS/FAHEEM_ENCRYPTION_KEY"


@dataclass(frozen=True)
class EncryptionKey:
    """One key: its id (written into each payload's metadata; not secret) and its 32 bytes."""

    id: str
    key: bytes

    def __repr__(self) -> str:  # never print the key itself
        return f"EncryptionKey(id={self.id!r})"


def key_fingerprint(key: bytes) -> str:
    """A key's stable short id: the first 8 hex characters of the SHA-256 of its 32 bytes."""
    return hashlib.sha256(key).hexdigest()[:8]


def _decode_key(text: str, where: str) -> bytes:
    t = text.strip()
    # Standard or URL-safe base64, padding optional (as the TypeScript side accepts).
    if t == "" or not _BASE64.match(t):
        raise EncryptionConfigError(f"{where} is not base64 (make a key with `openssl rand -base64 32`)")
    std = t.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        key = base64.b64decode(std + "=" * (-len(std) % 4))
    except binascii.Error as err:
        raise EncryptionConfigError(
            f"{where} is not base64 (make a key with `openssl rand -base64 32`)"
        ) from err
    if len(key) != KEY_BYTES:
        raise EncryptionConfigError(
            f"{where} is {len(key)} bytes once base64-decoded; it must be exactly {KEY_BYTES} "
            "(make one with `openssl rand -base64 32`)"
        )
    return key


def parse_encryption_keys(env: Mapping[str, str] | None = None) -> list[EncryptionKey] | None:
    """The keys configured in ``env`` (default ``os.environ``), the encrypting one first; ``None`` without any.

    Raises:
        EncryptionConfigError: naming the variable and what is wrong.
    """
    env = os.environ if env is None else env
    single = (env.get("FAHEEM_ENCRYPTION_KEY") or "").strip()
    listed = (env.get("FAHEEM_ENCRYPTION_KEYS") or "").strip()
    if single and listed:
        raise EncryptionConfigError(
            "FAHEEM_ENCRYPTION_KEY and FAHEEM_ENCRYPTION_KEYS are both set; set only "
            "FAHEEM_ENCRYPTION_KEYS (the first key encrypts, all decrypt) and unset FAHEEM_ENCRYPTION_KEY"
        )
    if single:
        key = _decode_key(single, "FAHEEM_ENCRYPTION_KEY")
        return [EncryptionKey(key_fingerprint(key), key)]
    if not listed:
        return None
    keys: list[EncryptionKey] = []
    for i, raw in enumerate(listed.split(",")):
        entry = raw.strip()
        where = f"FAHEEM_ENCRYPTION_KEYS entry {i + 1}"
        if entry == "":
            raise EncryptionConfigError(
                f"{where} is empty (expected id1:key1,id2:key2 with base64 32-byte keys)"
            )
        colon = entry.find(":")
        key_id = entry[:colon].strip() if colon >= 0 else None
        if key_id is not None and not _KEY_ID.match(key_id):
            raise EncryptionConfigError(
                f'{where} has the key id "{key_id}"; ids are 1 to 64 letters, digits, '
                "'.', '_' or '-' (format id1:key1,id2:key2)"
            )
        key = _decode_key(
            entry[colon + 1 :] if colon >= 0 else entry,
            f'{where} (key id "{key_id}")' if key_id else where,
        )
        final_id = key_id or key_fingerprint(key)
        if any(k.id == final_id for k in keys):
            raise EncryptionConfigError(f'FAHEEM_ENCRYPTION_KEYS has the key id "{final_id}" twice')
        keys.append(EncryptionKey(final_id, key))
    return keys


def is_encrypted(payload: Payload) -> bool:
    """Whether ``payload`` is one this codec wrote (``encoding: binary/encrypted``)."""
    return payload.metadata.get("encoding") == ENCRYPTED_ENCODING


class EncryptionCodec(PayloadCodec):
    """AES-256-GCM over the whole serialized Payload, the TypeScript codec's wire format.

    Encodes with the first key; decodes with whichever key the payload names (by its id, or by the
    fingerprint of a key). Payloads that are not encrypted pass through decode unchanged.
    """

    def __init__(self, keys: Sequence[EncryptionKey]) -> None:
        if not keys:
            raise EncryptionConfigError("EncryptionCodec needs at least one key")
        self.keys = list(keys)
        self._by_id: dict[str, bytes] = {}
        for k in self.keys:
            if len(k.key) != KEY_BYTES:
                raise EncryptionConfigError(f'key "{k.id}" is {len(k.key)} bytes; it must be {KEY_BYTES}')
            self._by_id[k.id] = k.key
        for k in self.keys:
            self._by_id.setdefault(key_fingerprint(k.key), k.key)

    @property
    def key_id(self) -> str:
        """The id new payloads carry."""
        return self.keys[0].id

    def encrypt(self, payload: Payload, iv: bytes | None = None) -> Payload:
        """One payload encrypted with the first key (``iv``: for test vectors only; default random)."""
        first = self.keys[0]
        nonce = os.urandom(IV_BYTES) if iv is None else iv
        if len(nonce) != IV_BYTES:
            raise ValueError(f"the IV must be {IV_BYTES} bytes")
        sealed = AESGCM(first.key).encrypt(nonce, payload.SerializeToString(), None)
        return Payload(
            metadata={"encoding": ENCRYPTED_ENCODING, KEY_ID_METADATA: first.id.encode()},
            data=nonce + sealed,
        )

    def decrypt(self, payload: Payload) -> Payload:
        """One payload decrypted (returned as it is when it is not encrypted)."""
        if not is_encrypted(payload):
            return payload
        key_id = payload.metadata.get(KEY_ID_METADATA, b"").decode("utf-8", "replace")
        key = self._by_id.get(key_id)
        if key is None:
            known = ", ".join(dict.fromkeys(k.id for k in self.keys))
            raise DecryptionError(
                f"this payload was encrypted with key {key_id or '(no id)'}, which is not in {_VARS} "
                f"of this process (it has {known}); add that key to FAHEEM_ENCRYPTION_KEYS "
                "(the first key encrypts, all decrypt)"
            )
        data = payload.data
        if len(data) < IV_BYTES + TAG_BYTES:
            raise DecryptionError(
                f"an encrypted payload (key {key_id}) is too short to be valid: it was altered"
            )
        try:
            plain = AESGCM(key).decrypt(data[:IV_BYTES], data[IV_BYTES:], None)
        except InvalidTag as err:
            raise DecryptionError(
                f"cannot decrypt a payload encrypted with key {key_id}: the key this process has under "
                "that id is not the one that encrypted it, or the data was altered "
                f"(check {_VARS})"
            ) from err
        inner = Payload()
        inner.ParseFromString(plain)
        return inner

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) for p in payloads]


def encryption_codec(env: Mapping[str, str] | None = None) -> EncryptionCodec | None:
    """The codec for ``env``'s keys, or ``None`` when no key is configured. Raises on a malformed key."""
    keys = parse_encryption_keys(env)
    return EncryptionCodec(keys) if keys else None
