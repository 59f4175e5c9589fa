"""Large payloads and the data converter, as the TypeScript side has them (src/storage/local-payloads.ts).

Payloads above 512 KiB are kept outside Temporal's history as files named by the SHA-256 of the
serialized Payload, in ``FAHEEM_PAYLOAD_DIR`` (default ``$FAHEEM_HOME/payloads``, ``~/.faheem/payloads``).
Both SDKs write the same claim (an ``ExternalStorageReference`` naming the driver
``faheem-local-files`` and ``{"sha256": ...}``), so either reads what the other stored. Codecs run
before storage on the way out, so a stored file is already ciphertext when a key is set.

With ``FAHEEM_OBJECT_STORE`` (an object store shared by hosts: ``s3://bucket/prefix`` for any
S3-compatible store, or ``file:///shared/dir``), payloads go there through Temporal's S3 driver, as
objects under ``<prefix>/payloads/`` (``<dir>/payloads/``), as the TypeScript side lays them out; the
folder's driver stays registered to read older claims.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from temporalio.api.common.v1 import Payload
from temporalio.contrib.aws.s3driver import S3StorageDriver, S3StorageDriverClient
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

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

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
#: The bucket the claims name (as the TypeScript side writes it): the store's own bucket is used.
CLAIM_BUCKET = "faheem"
#: The largest object the store takes unless FAHEEM_OBJECT_MAX_BYTES says otherwise (as in TypeScript).
DEFAULT_MAX_OBJECT_BYTES = 1024 * 1024 * 1024
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def _payload_key(key: str) -> str:
    """The object of a claim's key, under ``payloads/``; a key that could leave it is refused."""
    if not key or any(part in ("", ".", "..") for part in key.split("/")):
        raise PayloadUnavailableError(f"bad object key {key!r} in a payload claim")
    return f"{OBJECT_STORE_PAYLOADS}/{key}"


class FolderObjectStore(S3StorageDriverClient):
    """A shared folder (``FAHEEM_OBJECT_STORE=file:///dir``) as the S3 driver's client: the object
    of key ``k`` is the file ``<dir>/payloads/k``, as the TypeScript side lays it out."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.location = f"file://{self.root}"

    def _file(self, key: str) -> Path:
        return self.root.joinpath(*_payload_key(key).split("/"))

    async def put_object(self, *, bucket: str, key: str, data: bytes) -> None:
        target = self._file(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)  # atomic: a reader never sees half an object

    async def object_exists(self, *, bucket: str, key: str) -> bool:
        return self._file(key).is_file()

    async def get_object(self, *, bucket: str, key: str) -> bytes:
        try:
            return self._file(key).read_bytes()
        except OSError as err:
            raise PayloadUnavailableError(
                f"no object {key} in {self.location}; set FAHEEM_OBJECT_STORE to the store the worker uses"
            ) from err

    def describe(self) -> Mapping[str, str]:
        return {"store": self.location}


class S3ObjectStore(S3StorageDriverClient):
    """An S3-compatible store (``FAHEEM_OBJECT_STORE=s3://bucket/prefix``) as the S3 driver's client,
    over boto3: the object of key ``k`` is ``<prefix>/payloads/k`` in the bucket, as the TypeScript
    side lays it out. Reached with the standard variables: ``AWS_ENDPOINT_URL_S3`` (or
    ``AWS_ENDPOINT_URL``; path-style addressing then, as self-hosted stores need),
    ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` and ``AWS_REGION``
    (default ``us-east-1``); without keys, boto3's own chain (profiles, instance roles)."""

    def __init__(self, bucket: str, prefix: str, env: Mapping[str, str]) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.location = f"s3://{bucket}" + (f"/{self.prefix}" if self.prefix else "")
        self._env = {k: v for k, v in env.items() if k.startswith("AWS_")}  # nothing else is kept
        self._s3: S3Client | None = None
        self._lock = threading.Lock()

    def _key(self, key: str) -> str:
        inner = _payload_key(key)
        return f"{self.prefix}/{inner}" if self.prefix else inner

    def _client(self) -> S3Client:
        # Made at the first use (boto3 takes a moment to load), in a worker thread.
        with self._lock:
            if self._s3 is None:
                import boto3
                from botocore.config import Config

                env = self._env
                endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
                session = boto3.session.Session(
                    aws_access_key_id=env.get("AWS_ACCESS_KEY_ID") or None,
                    aws_secret_access_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
                    aws_session_token=env.get("AWS_SESSION_TOKEN") or None,
                    region_name=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
                )
                config = Config(
                    retries={"max_attempts": 4, "mode": "standard"},
                    # Checksums only where S3 requires them: self-hosted stores differ on the rest.
                    request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                    # Path-style for an endpoint of its own: SeaweedFS, MinIO and most self-hosted stores.
                    s3={"addressing_style": "path" if endpoint else "auto"},
                )
                self._s3 = session.client("s3", endpoint_url=endpoint, config=config)
            return self._s3

    def _failure(self, doing: str, key: str, err: Exception) -> PayloadUnavailableError:
        from botocore.exceptions import ClientError, NoCredentialsError

        if isinstance(err, NoCredentialsError):
            return PayloadUnavailableError(
                f"{doing} {key} in {self.location}: no credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            )
        if isinstance(err, ClientError):
            code = str(err.response.get("Error", {}).get("Code", ""))
            status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 404 or code in ("404", "NoSuchKey", "NotFound"):
                return PayloadUnavailableError(
                    f"no object {key} in {self.location}; set FAHEEM_OBJECT_STORE to the store the worker uses"
                )
            if status in (401, 403):
                return PayloadUnavailableError(
                    f"{doing} {key} in {self.location} was refused ({code or status}): "
                    "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                )
        return PayloadUnavailableError(
            f"{doing} {key} in {self.location} failed: {type(err).__name__}: {err} "
            "(check AWS_ENDPOINT_URL_S3 and the store's bucket)"
        )

    def _put(self, key: str, data: bytes) -> None:
        self._client().put_object(Bucket=self.bucket, Key=self._key(key), Body=data)

    def _exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._client().head_object(Bucket=self.bucket, Key=self._key(key))
            return True
        except ClientError as err:
            if err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404:
                return False
            raise

    def _get(self, key: str) -> bytes:
        body = self._client().get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        try:
            return body.read()
        finally:
            body.close()

    async def put_object(self, *, bucket: str, key: str, data: bytes) -> None:
        try:
            await asyncio.to_thread(self._put, key, data)
        except PayloadUnavailableError:
            raise
        except Exception as err:
            raise self._failure("writing", key, err) from err

    async def object_exists(self, *, bucket: str, key: str) -> bool:
        try:
            return await asyncio.to_thread(self._exists, key)
        except PayloadUnavailableError:
            raise
        except Exception as err:
            raise self._failure("looking up", key, err) from err

    async def get_object(self, *, bucket: str, key: str) -> bytes:
        try:
            return await asyncio.to_thread(self._get, key)
        except PayloadUnavailableError:
            raise
        except Exception as err:
            raise self._failure("reading", key, err) from err

    def describe(self) -> Mapping[str, str]:
        return {"store": self.location}


class ObjectStorePayloadDriver(StorageDriver):
    """Temporal's S3 driver (``temporalio.contrib.aws.s3driver``) over the object store, as the
    TypeScript side has ``@temporalio/external-storage-s3`` over it: same name (``aws.s3driver``),
    same keys (``v0/…/d/sha256/<hex>``), and the store's bucket whatever bucket a claim names.

    One difference is bridged here: the TypeScript driver (1.22) spells the claim's hash
    ``hashAlgorithm``/``hashValue`` and the Python one (1.35) ``hash_algorithm``/``hash_value``, and
    each refuses the other's. Claims are written with both spellings and read in either.
    """

    def __init__(
        self, objects: FolderObjectStore | S3ObjectStore, max_bytes: int = DEFAULT_MAX_OBJECT_BYTES
    ) -> None:
        self.objects = objects
        self._driver = S3StorageDriver(client=objects, bucket=CLAIM_BUCKET, max_payload_size=max_bytes)

    def name(self) -> str:
        return S3_DRIVER

    def type(self) -> str:
        return S3_DRIVER

    def _unavailable(self, err: Exception) -> PayloadUnavailableError:
        # The driver wraps what the store raised; that error already says what to do.
        if isinstance(err.__cause__, PayloadUnavailableError):
            return err.__cause__
        return PayloadUnavailableError(f"object store {self.objects.location}: {err}")

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        try:
            claims = await self._driver.store(context, payloads)
        except PayloadUnavailableError:
            raise
        except Exception as err:
            raise self._unavailable(err) from err
        out = []
        for c in claims:
            data = dict(c.claim_data)
            data["hashAlgorithm"] = data["hash_algorithm"]
            data["hashValue"] = data["hash_value"]
            out.append(StorageDriverClaim(claim_data=data))
        return out

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        both = []
        for c in claims:
            data = dict(c.claim_data)
            data.setdefault("hash_algorithm", data.get("hashAlgorithm", ""))
            data.setdefault("hash_value", data.get("hashValue", ""))
            _payload_key(data.get("key", ""))
            both.append(StorageDriverClaim(claim_data=data))
        try:
            return await self._driver.retrieve(context, both)
        except PayloadUnavailableError:
            raise
        except Exception as err:
            raise self._unavailable(err) from err


def _max_object_bytes(env: Mapping[str, str]) -> int:
    raw = (env.get("FAHEEM_OBJECT_MAX_BYTES") or "").strip()
    if not raw:
        return DEFAULT_MAX_OBJECT_BYTES
    if not raw.isdigit() or int(raw) <= 0:
        raise PayloadUnavailableError(
            f"FAHEEM_OBJECT_MAX_BYTES must be a positive whole number of bytes, not {raw!r}"
        )
    return int(raw)


def object_store(env: Mapping[str, str] | None = None) -> FolderObjectStore | S3ObjectStore | None:
    """The object store ``FAHEEM_OBJECT_STORE`` names (``file:///dir`` or ``s3://bucket/prefix``), or None."""
    env = os.environ if env is None else env
    value = (env.get("FAHEEM_OBJECT_STORE") or "").strip()
    if not value:
        return None
    url = urlparse(value)
    if url.scheme == "file" and not url.netloc and url.path:
        return FolderObjectStore(Path(unquote(url.path)))
    if url.scheme == "s3" and url.netloc:
        if url.username or url.password:
            raise PayloadUnavailableError(
                "FAHEEM_OBJECT_STORE holds no credentials: use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            )
        if not _BUCKET.match(url.netloc):
            raise PayloadUnavailableError(
                f"FAHEEM_OBJECT_STORE {value}: {url.netloc!r} is not a valid bucket name"
            )
        return S3ObjectStore(url.netloc, unquote(url.path), env)
    raise PayloadUnavailableError(
        f"FAHEEM_OBJECT_STORE must be s3://bucket/prefix or file:///path, not {value!r}"
    )


def external_storage(env: Mapping[str, str] | None = None) -> ExternalStorage:
    """The external storage every faheemcode process uses above 512 KiB: local files, or the object
    store FAHEEM_OBJECT_STORE names (the folder's driver still reads older claims)."""
    env = os.environ if env is None else env
    local = LocalFilePayloadDriver(payload_dir(env))
    objects = object_store(env)
    if objects is None:
        return ExternalStorage(drivers=[local], payload_size_threshold=PAYLOAD_SIZE_THRESHOLD)
    shared = ObjectStorePayloadDriver(objects, _max_object_bytes(env))
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
