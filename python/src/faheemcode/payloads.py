"""Large payloads and the data converter, as the TypeScript side has them (src/storage/local-payloads.ts).

Payloads above 512 KiB are kept outside Temporal's history as files named by the SHA-256 of the
serialized Payload, in ``FAHEEM_PAYLOAD_DIR`` (default ``$FAHEEM_HOME/payloads``, ``~/.faheem/payloads``).
Both SDKs write the same claim (an ``ExternalStorageReference`` naming the driver
``faheem-local-files`` and ``{"sha256": ...}``), so either reads what the other stored. Codecs run
before storage on the way out, so a stored file is already ciphertext when a key is set.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

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


def external_storage(env: Mapping[str, str] | None = None) -> ExternalStorage:
    """The external storage every faheemcode process uses: local files, above 512 KiB."""
    return ExternalStorage(
        drivers=[LocalFilePayloadDriver(payload_dir(env))],
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
