"""Large payloads: kept as files named by their SHA-256, with the claim the TypeScript driver writes
and reads (an ExternalStorageReference naming `faheem-local-files`); a missing file says what to do."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload

from faheemcode.errors import PayloadUnavailableError
from faheemcode.payloads import PAYLOAD_SIZE_THRESHOLD, data_converter, payload_dir

from conftest import ROOT


def test_the_folder_is_the_workers() -> None:
    assert payload_dir({"FAHEEM_HOME": "/h"}) == Path("/h/payloads")
    assert payload_dir({"FAHEEM_HOME": "/h", "FAHEEM_PAYLOAD_DIR": "/p"}) == Path("/p")


@pytest.mark.parametrize("encrypt", [False, True], ids=["plain", "encrypted"])
def test_a_large_payload_goes_to_a_file_and_comes_back(tmp_path: Path, encrypt: bool) -> None:
    env = {"FAHEEM_PAYLOAD_DIR": str(tmp_path)}
    if encrypt:
        env["FAHEEM_ENCRYPTION_KEY"] = base64.b64encode(bytes(32)).decode()
    converter = data_converter(env)
    big = {"text": "x" * (PAYLOAD_SIZE_THRESHOLD + 10)}
    (reference,) = asyncio.run(converter.encode([big]))
    # The claim, in the wire form TypeScript's ExternalStorage reads (extstore-helpers in @temporalio/common).
    assert reference.metadata["encoding"] == b"json/protobuf"
    assert reference.metadata["messageType"] == b"temporal.api.sdk.v1.ExternalStorageReference"
    claim = json.loads(reference.data)
    assert claim["driverName"] == "faheem-local-files"
    (stored,) = list(tmp_path.glob("*.bin"))
    digest = claim["claimData"]["sha256"]
    assert stored.name == f"{digest}.bin" and hashlib.sha256(stored.read_bytes()).hexdigest() == digest
    kept = Payload()
    kept.ParseFromString(stored.read_bytes())
    assert (kept.metadata["encoding"] == b"binary/encrypted") is encrypt  # the codec runs first
    assert asyncio.run(converter.decode([reference])) == [big]


def test_a_missing_file_names_the_folder_and_the_variable(tmp_path: Path) -> None:
    converter = data_converter({"FAHEEM_PAYLOAD_DIR": str(tmp_path)})
    (reference,) = asyncio.run(converter.encode(["y" * (PAYLOAD_SIZE_THRESHOLD + 1)]))
    for f in tmp_path.glob("*.bin"):
        f.unlink()
    with pytest.raises(PayloadUnavailableError, match="FAHEEM_PAYLOAD_DIR"):
        asyncio.run(converter.decode([reference]))


STORE = ROOT / "test" / "fixtures" / "payload-store"
CLAIMS: list[dict[str, Any]] = json.loads((STORE / "claims.json").read_text())["claims"]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"stored-by-{c['madeBy']}")
def test_a_payload_either_language_stored_is_read_from_the_same_folder(claim: dict[str, Any]) -> None:
    # The fixtures are shared with test/unit/storage/local-payloads.test.ts, which reads both too.
    wire = claim["reference"]
    reference = Payload(
        metadata={k: base64.b64decode(v) for k, v in wire["metadata"].items()},
        data=base64.b64decode(wire["data"]),
    )
    for e in wire["externalPayloads"]:
        reference.external_payloads.add().size_bytes = e["sizeBytes"]
    converter = data_converter({"FAHEEM_PAYLOAD_DIR": str(STORE)})
    assert asyncio.run(converter.decode([reference])) == [claim["value"]]


def test_a_shared_folder_object_store_keeps_payloads_under_payloads(tmp_path: Path) -> None:
    env = {"FAHEEM_OBJECT_STORE": f"file://{tmp_path}/store", "FAHEEM_PAYLOAD_DIR": str(tmp_path / "local")}
    converter = data_converter(env)
    big = ["z" * (PAYLOAD_SIZE_THRESHOLD + 5)]
    (reference,) = asyncio.run(converter.encode(big))
    claim = json.loads(reference.data)
    assert claim["driverName"] == "aws.s3driver"  # Temporal's S3 driver, as the TypeScript side writes it
    stored = tmp_path / "store" / "payloads" / claim["claimData"]["key"]
    assert stored.is_file() and not (tmp_path / "local").exists()
    assert asyncio.run(converter.decode([reference])) == big
    # An older claim of the folder's driver is still read.
    older = data_converter({"FAHEEM_PAYLOAD_DIR": str(tmp_path / "local")})
    (local_ref,) = asyncio.run(older.encode(big))
    assert asyncio.run(converter.decode([local_ref])) == big


def test_a_bad_object_store_is_refused_clearly() -> None:
    # Reading and writing s3:// stores: tests/test_payloads_s3.py, against a real S3 server.
    for value, message in [
        ("ftp://x", "must be s3://bucket/prefix or file:///path"),
        ("s3://No_Such/prefix", "not a valid bucket name"),
        ("s3://key:secret@bucket/prefix", "holds no credentials"),
    ]:
        with pytest.raises(PayloadUnavailableError, match=message):
            data_converter({"FAHEEM_OBJECT_STORE": value})
    with pytest.raises(PayloadUnavailableError, match="FAHEEM_OBJECT_MAX_BYTES"):
        data_converter({"FAHEEM_OBJECT_STORE": "s3://bucket/prefix", "FAHEEM_OBJECT_MAX_BYTES": "lots"})


def test_the_typescript_s3_drivers_claim_is_read(tmp_path: Path) -> None:
    # @temporalio/external-storage-s3 1.22 writes {bucket, key, hashAlgorithm, hashValue} (camelCase)
    # and keys objects v0/d/sha256/<hex>; Temporal's Python driver alone would refuse that spelling.
    inner = Payload(metadata={"encoding": b"json/plain"}, data=b'"from typescript"')
    data = inner.SerializeToString()
    digest = hashlib.sha256(data).hexdigest()
    key = f"v0/d/sha256/{digest}"
    (tmp_path / "payloads" / "v0" / "d" / "sha256").mkdir(parents=True)
    (tmp_path / "payloads" / key).write_bytes(data)
    claim = {
        "driverName": "aws.s3driver",
        "claimData": {"bucket": "faheem", "key": key, "hashAlgorithm": "sha256", "hashValue": digest},
    }
    reference = Payload(
        metadata={
            "encoding": b"json/protobuf",
            "messageType": b"temporal.api.sdk.v1.ExternalStorageReference",
        },
        data=json.dumps(claim).encode(),
    )
    converter = data_converter({"FAHEEM_OBJECT_STORE": f"file://{tmp_path}"})
    assert asyncio.run(converter.decode([reference])) == ["from typescript"]
    (tmp_path / "payloads" / key).write_bytes(data + b"x")
    with pytest.raises(PayloadUnavailableError, match="integrity check failed"):
        asyncio.run(converter.decode([reference]))
