"""Large payloads and the data converter, as the TypeScript side has them (src/storage/local-payloads.ts).

Payloads above 512 KiB are kept outside Temporal's history as files named by the SHA-256 of the
serialized Payload, in ``FAHEEM_PAYLOAD_DIR`` (default ``$FAHEEM_HOME/payloads``, ``~/.faheem/payloads``).
Both SDKs write the same claim (an ``ExternalStorageReference`` naming the driver
``faheem-local-files`` and ``{"sha256": ...}``), so either reads what the other stored. Codecs run
before storage on the way out, so a stored file is already ciphertext when a key is set.

With ``FAHEEM_OBJECT_STORE=file:///shared/dir`` (an object store shared by hosts), payloads go, with
the claims of Temporal's S3 driver, to objects under ``<dir>/payloads/``, as the TypeScript side lays
them out; the
folder's driver stays registered to read older claims. An ``s3://`` store is not read from Python:
a payload there is a clear :class:`PayloadUnavailableError`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverter,
    DefaultFailureConverterWithEncodedAttributes,
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from .codec import encryption_codec
from .errors import PayloadUnavailableError

#: Payloads above this size are stored outside history (Temporal's hard limit is 2 MB).
PAYLOAD_SIZE_THRESHOLD = 512 * 1024
#: The driver name the TypeScript side writes into its claims.
LOCAL_FILES_DRIVER = "faheem-local-files"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def faheem_home(env: Mapping[str, str] | None = None) -> Path:
    """``FAHEEM_HOME``, default ``~/.faheem``."""
    env = os.environ if env is None else env
    return Path(env.get("FAHEEM_HOME") or Path.home() / ".faheem")


def payload_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where large payloads live: ``FAHEEM_PAYLOAD_DIR``, default ``$FAHEEM_HOME/payloads``."""
    env = os.environ if env is None else env
    return Path(env.get("FAHEEM_PAYLOAD_DIR") or faheem_home(env) / "payloads")


class LocalFilePayloadDriver(StorageDriver):
    """Temporal's external-storage hook over a folder: the TypeScript ``LocalFilePayloadDriver``'s twin."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def name(self) -> str:
        return LOCAL_FILES_DRIVER

    def type(self) -> str:
        return "faheem.local-files"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        self.directory.mkdir(parents=True, exist_ok=True)
        claims = []
        for p in payloads:
            data = p.SerializeToString(deterministic=True)
            digest = hashlib.sha256(data).hexdigest()
            target = self.directory / f"{digest}.bin"
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)  # atomic: a reader never sees half a payload
            claims.append(StorageDriverClaim(claim_data={"sha256": digest}))
        return claims

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        out = []
        for c in claims:
            digest = c.claim_data.get("sha256", "")
            if not _SHA256.match(digest):
                raise PayloadUnavailableError(f"bad payload claim {dict(c.claim_data)!r}")
            path = self.directory / f"{digest}.bin"
            try:
                data = path.read_bytes()
            except OSError as err:
                raise PayloadUnavailableError(
                    f"payload {digest} is not in {self.directory}; set FAHEEM_PAYLOAD_DIR to the "
                    "folder the worker uses (the worker's FAHEEM_PAYLOAD_DIR, or its $FAHEEM_HOME/payloads)"
                ) from err
            payload = Payload()
            payload.ParseFromString(data)
            out.append(payload)
        return out


#: Where payloads go inside an object store (the TypeScript side's PAYLOADS_PREFIX).
OBJECT_STORE_PAYLOADS = "payloads"
#: The name Temporal's S3 driver gives its claims, in both SDKs.
S3_DRIVER = "aws.s3driver"


class FileObjectStoreDriver(StorageDriver):
    """Temporal's S3 driver's claims (name ``aws.s3driver``) over a shared folder
    (``FAHEEM_OBJECT_STORE=file:///dir``): object ``key`` is the file ``<dir>/payloads/<key>``.

    Written here rather than taken from ``temporalio.contrib.aws.s3driver``: the TypeScript S3
    driver (1.22) spells the claim's hash ``hashAlgorithm``/``hashValue`` and the Python one (1.35)
    ``hash_algorithm``/``hash_value``, and each refuses the other's. This one reads both spellings,
    checks the SHA-256, and writes both, with the TypeScript driver's key (``v0/d/sha256/<hex>``).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def name(self) -> str:
        return S3_DRIVER

    def type(self) -> str:
        return S3_DRIVER

    def _file(self, key: str) -> Path:
        parts = key.split("/")
        if not key or any(p in ("", ".", "..") for p in parts):
            raise PayloadUnavailableError(f"bad object key {key!r} in a payload claim")
        return self.root.joinpath(OBJECT_STORE_PAYLOADS, *parts)

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        claims = []
        for p in payloads:
            data = p.SerializeToString(deterministic=True)
            digest = hashlib.sha256(data).hexdigest()
            key = f"v0/d/sha256/{digest}"
            target = self._file(key)
            if not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, target)  # atomic: a reader never sees half an object
            claims.append(
                StorageDriverClaim(
                    claim_data={
                        "bucket": "faheem",
                        "key": key,
                        "hashAlgorithm": "sha256",
                        "hashValue": digest,
                        "hash_algorithm": "sha256",
                        "hash_value": digest,
                    }
                )
            )
        return claims

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        out = []
        for c in claims:
            data_ = c.claim_data
            key = data_.get("key", "")
            algorithm = data_.get("hashAlgorithm") or data_.get("hash_algorithm")
            expected = data_.get("hashValue") or data_.get("hash_value")
            if algorithm != "sha256" or not expected:
                raise PayloadUnavailableError(f"a payload claim for {key!r} names no sha256 hash")
            try:
                data = self._file(key).read_bytes()
            except OSError as err:
                raise PayloadUnavailableError(
                    f"no object {key} in file://{self.root}; set FAHEEM_OBJECT_STORE to the store the worker uses"
                ) from err
            if hashlib.sha256(data).hexdigest() != expected:
                raise PayloadUnavailableError(
                    f"object {key} in file://{self.root} was altered (its sha256 differs)"
                )
            payload = Payload()
            payload.ParseFromString(data)
            out.append(payload)
        return out


class UnreadableStoreDriver(StorageDriver):
    """Stands for an object store this client cannot reach (``s3://``): a clear error, not the SDK's
    "no driver found"."""

    def __init__(self, location: str) -> None:
        self.location = location

    def name(self) -> str:
        return S3_DRIVER

    def _refuse(self) -> PayloadUnavailableError:
        return PayloadUnavailableError(
            f"a payload is in the object store {self.location} (FAHEEM_OBJECT_STORE), which the Python "
            "client does not read; read the conversation with the TypeScript CLI, or share the store as a "
            "folder (file:///…) with this host"
        )

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        raise self._refuse()

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        raise self._refuse()


def object_store_root(env: Mapping[str, str] | None = None) -> Path | str | None:
    """``FAHEEM_OBJECT_STORE``: the folder of a ``file:///dir`` store, the URL of an ``s3://`` one, or None."""
    env = os.environ if env is None else env
    value = (env.get("FAHEEM_OBJECT_STORE") or "").strip()
    if not value:
        return None
    url = urlparse(value)
    if url.scheme == "file" and not url.netloc and url.path:
        return Path(unquote(url.path))
    if url.scheme == "s3" and url.netloc:
        return value
    raise PayloadUnavailableError(
        f"FAHEEM_OBJECT_STORE must be s3://bucket/prefix or file:///path, not {value!r}"
    )


def external_storage(env: Mapping[str, str] | None = None) -> ExternalStorage:
    """The external storage every faheemcode process uses above 512 KiB: local files, or the object
    store FAHEEM_OBJECT_STORE names (the folder's driver still reads older claims)."""
    local = LocalFilePayloadDriver(payload_dir(env))
    store = object_store_root(env)
    if store is None:
        return ExternalStorage(drivers=[local], payload_size_threshold=PAYLOAD_SIZE_THRESHOLD)
    shared: StorageDriver = (
        FileObjectStoreDriver(store) if isinstance(store, Path) else UnreadableStoreDriver(store)
    )
    return ExternalStorage(
        drivers=[shared, local],
        driver_selector=lambda _context, _payload: shared,
        payload_size_threshold=PAYLOAD_SIZE_THRESHOLD,
    )


def data_converter(env: Mapping[str, str] | None = None) -> DataConverter:
    """JSON payloads as the TypeScript SDK writes them, large ones kept aside, encrypted with a key.

    With a key, failure messages and stack traces move into the encoded attributes (so they are
    encrypted too), as the TypeScript side's failure converter does. Raises on a malformed key.
    """
    codec = encryption_codec(env)
    failure: type[DefaultFailureConverter] = (
        DefaultFailureConverterWithEncodedAttributes if codec else DefaultFailureConverter
    )
    return DataConverter(
        payload_codec=codec,
        failure_converter_class=failure,
        external_storage=external_storage(env),
    )
