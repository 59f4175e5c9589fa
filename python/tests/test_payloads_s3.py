"""Large payloads in an ``s3://`` object store, against a real S3 server: SeaweedFS, started with the
TypeScript worker's own external storage over it by test/support/payload-s3.ts. What the TypeScript
side stores there, Python reads, and the other way round, encrypted or not; the objects are where
the TypeScript side keeps them (``<prefix>/payloads/<key>``); a missing or altered object, or a
wrong secret, is a clear PayloadUnavailableError."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.config import Config
from temporalio.api.common.v1 import Payload

from faheemcode.errors import PayloadUnavailableError
from faheemcode.payloads import PAYLOAD_SIZE_THRESHOLD, data_converter

from conftest import ROOT

KEY = base64.b64encode(bytes(range(32))).decode()


def to_wire(p: Payload) -> dict[str, Any]:
    return {
        "metadata": {k: base64.b64encode(v).decode() for k, v in p.metadata.items()},
        "data": base64.b64encode(p.data).decode(),
    }


def from_wire(w: dict[str, Any]) -> Payload:
    return Payload(
        metadata={k: base64.b64decode(v) for k, v in w["metadata"].items()},
        data=base64.b64decode(w["data"]),
    )


@dataclass
class TypeScriptSide:
    """The helper process: the S3 server's variables, and the worker's external storage on request."""

    process: subprocess.Popen[str]
    env: dict[str, str]
    bucket: str

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert "error" not in answer, answer["error"]
        return answer

    def s3(self) -> Any:
        return boto3.session.Session(
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
            region_name=self.env["AWS_REGION"],
        ).client(
            "s3", endpoint_url=self.env["AWS_ENDPOINT_URL_S3"], config=Config(s3={"addressing_style": "path"})
        )


@pytest.fixture(scope="module")
def ts() -> Iterator[TypeScriptSide]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("the s3:// payload tests need node (the TypeScript side and the S3 server's starter)")
    proc = subprocess.Popen(
        [node, "--import", "tsx", "test/support/payload-s3.ts"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FORCE_COLOR": "0"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(proc.stderr or []), daemon=True).start()
    # A deadline for a loaded machine (and for building weed when FAHEEM_WEED names none), not a timing.
    timer = threading.Timer(900, proc.kill)
    timer.start()
    try:
        line = proc.stdout.readline()
    finally:
        timer.cancel()
    if not line.startswith("{"):
        proc.wait()
        pytest.fail("the S3 server did not start:\n" + line + "".join(errors))
    env = dict(json.loads(line)["env"])
    bucket = env.pop("bucket")
    side = TypeScriptSide(proc, env, bucket)
    try:
        yield side
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the helper stops the server and removes its folder
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def store_env(ts: TypeScriptSide, prefix: str, encrypt: bool = False) -> dict[str, str]:
    env = {**ts.env, "FAHEEM_OBJECT_STORE": f"s3://{ts.bucket}/{prefix}", "FAHEEM_PAYLOAD_DIR": os.devnull}
    if encrypt:
        env["FAHEEM_ENCRYPTION_KEY"] = KEY
    return env


def claim_of(reference: Payload) -> dict[str, Any]:
    assert reference.metadata["messageType"] == b"temporal.api.sdk.v1.ExternalStorageReference"
    claim: dict[str, Any] = json.loads(reference.data)
    assert claim["driverName"] == "aws.s3driver"
    return claim


@pytest.mark.parametrize("encrypt", [False, True], ids=["plain", "encrypted"])
def test_what_the_typescript_worker_stores_in_s3_python_reads(ts: TypeScriptSide, encrypt: bool) -> None:
    env = store_env(ts, "from-ts", encrypt)
    big = {"madeBy": "typescript", "text": "t" * (PAYLOAD_SIZE_THRESHOLD + 100)}
    reference = from_wire(ts.ask({"store": big, "env": env, "workflowId": "conv 1"})["reference"])
    key = claim_of(reference)["claimData"]["key"]
    assert "/wi/conv%201/" in key, key  # Temporal's S3 driver's key, with the workflow's id
    # Where the TypeScript side keeps it: <prefix>/payloads/<key>, in the store's bucket.
    stored = ts.s3().get_object(Bucket=ts.bucket, Key=f"from-ts/payloads/{key}")["Body"].read()
    assert (b"binary/encrypted" in stored) is encrypt and (b"tttt" in stored) is not encrypt
    assert asyncio.run(data_converter(env).decode([reference])) == [big]


@pytest.mark.parametrize("encrypt", [False, True], ids=["plain", "encrypted"])
def test_what_python_stores_in_s3_the_typescript_worker_reads(ts: TypeScriptSide, encrypt: bool) -> None:
    env = store_env(ts, "from-py", encrypt)
    big = {"madeBy": "python", "text": "p" * (PAYLOAD_SIZE_THRESHOLD + 100)}
    (reference,) = asyncio.run(data_converter(env).encode([big]))
    claim = claim_of(reference)["claimData"]
    # Both spellings of the hash: Temporal's TypeScript driver reads one, its Python driver the other.
    assert claim["hashAlgorithm"] == claim["hash_algorithm"] == "sha256"
    assert claim["hashValue"] == claim["hash_value"]
    ts.s3().head_object(Bucket=ts.bucket, Key=f"from-py/payloads/{claim['key']}")
    assert ts.ask({"retrieve": to_wire(reference), "env": env})["value"] == big


def test_a_missing_or_altered_object_and_a_wrong_secret_are_clear_errors(ts: TypeScriptSide) -> None:
    env = store_env(ts, "errors")
    converter = data_converter(env)
    (reference,) = asyncio.run(converter.encode(["e" * (PAYLOAD_SIZE_THRESHOLD + 1)]))
    object_key = f"errors/payloads/{claim_of(reference)['claimData']['key']}"
    s3 = ts.s3()

    wrong = data_converter({**env, "AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    with pytest.raises(PayloadUnavailableError, match="refused.*AWS_SECRET_ACCESS_KEY"):
        asyncio.run(wrong.decode([reference]))

    stored = s3.get_object(Bucket=ts.bucket, Key=object_key)["Body"].read()
    s3.put_object(Bucket=ts.bucket, Key=object_key, Body=stored + b"x")
    with pytest.raises(PayloadUnavailableError, match="integrity check failed"):
        asyncio.run(converter.decode([reference]))

    s3.delete_object(Bucket=ts.bucket, Key=object_key)
    with pytest.raises(
        PayloadUnavailableError, match=f"no object .* in s3://{ts.bucket}/errors; set FAHEEM_OBJECT_STORE"
    ):
        asyncio.run(converter.decode([reference]))
