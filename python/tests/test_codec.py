"""The payload codec: the vectors shared with the TypeScript codec (test/fixtures/codec-vectors.json,
checked by test/unit/security/codec-vectors.test.ts too), and the key variables read as TypeScript reads them."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload

from faheemcode.codec import EncryptionCodec, encryption_codec, key_fingerprint, parse_encryption_keys
from faheemcode.errors import DecryptionError, EncryptionConfigError

from conftest import ROOT

SHARED: dict[str, Any] = json.loads((ROOT / "test" / "fixtures" / "codec-vectors.json").read_text())


def to_payload(wire: dict[str, Any]) -> Payload:
    return Payload(
        metadata={k: base64.b64decode(v) for k, v in wire["metadata"].items()},
        data=base64.b64decode(wire["data"]),
    )


def to_wire(p: Payload) -> dict[str, Any]:
    return {
        "metadata": {k: base64.b64encode(v).decode() for k, v in p.metadata.items()},
        "data": base64.b64encode(p.data).decode(),
    }


def codec_for(env: dict[str, str]) -> EncryptionCodec:
    codec = encryption_codec(env)
    assert codec is not None
    return codec


def test_both_languages_made_vectors() -> None:
    made_by = {v["madeBy"] for v in SHARED["vectors"]}
    assert made_by == {"python", "typescript"}


def test_a_key_id_is_its_fingerprint_as_typescript_computes_it() -> None:
    for f in SHARED["fingerprints"]:
        assert key_fingerprint(base64.b64decode(f["key"])) == f["id"]


@pytest.mark.parametrize("case", SHARED["decodeEnvs"], ids=lambda c: ",".join(c["decrypts"]))
def test_every_vector_decrypts_under_an_environment_holding_its_key(case: dict[str, Any]) -> None:
    codec = codec_for(case["env"])
    for v in SHARED["vectors"]:
        encrypted = to_payload(v["encrypted"])
        assert encrypted.metadata["encryption-key-id"].decode() == v["keyId"]
        if v["keyId"] in case["decrypts"]:
            (plain,) = asyncio.run(codec.decode([encrypted]))
            assert to_wire(plain) == v["plain"], f"a vector made by {v['madeBy']}"
        else:
            with pytest.raises(DecryptionError, match="not in FAHEEM_ENCRYPTION_KEYS"):
                asyncio.run(codec.decode([encrypted]))


def test_what_python_encrypts_now_decrypts_under_the_same_environment() -> None:
    for v in (x for x in SHARED["vectors"] if x["madeBy"] == "python"):
        codec = codec_for(v["encodeEnv"])
        (encrypted,) = asyncio.run(codec.encode([to_payload(v["plain"])]))
        assert encrypted.metadata["encoding"] == b"binary/encrypted"
        assert encrypted.metadata["encryption-key-id"].decode() == v["keyId"]
        assert len(encrypted.data) == 12 + len(to_payload(v["plain"]).SerializeToString()) + 16
        (plain,) = asyncio.run(codec.decode([encrypted]))
        assert to_wire(plain) == v["plain"]


def test_an_altered_payload_does_not_decrypt() -> None:
    v = next(x for x in SHARED["vectors"] if x["madeBy"] == "typescript")
    data = bytearray(base64.b64decode(v["encrypted"]["data"]))
    data[-1] ^= 1
    altered = {**v["encrypted"], "data": base64.b64encode(bytes(data)).decode()}
    with pytest.raises(DecryptionError, match="altered"):
        asyncio.run(codec_for(v["encodeEnv"]).decode([to_payload(altered)]))


def test_payloads_that_are_not_encrypted_pass_through() -> None:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"hi"')
    (out,) = asyncio.run(codec_for(SHARED["decodeEnvs"][0]["env"]).decode([plain]))
    assert out == plain


KEY = base64.b64encode(bytes(range(32))).decode()


def test_no_key_means_no_codec() -> None:
    assert parse_encryption_keys({}) is None
    assert encryption_codec({"FAHEEM_ENCRYPTION_KEY": "  "}) is None


def test_keys_are_read_as_typescript_reads_them() -> None:
    (single,) = parse_encryption_keys({"FAHEEM_ENCRYPTION_KEY": KEY}) or []
    assert single.id == key_fingerprint(bytes(range(32)))
    url_safe = base64.urlsafe_b64encode(bytes(range(32))).decode().rstrip("=")
    keys = parse_encryption_keys({"FAHEEM_ENCRYPTION_KEYS": f"new:{url_safe}, {KEY}"}) or []
    assert [k.id for k in keys] == ["new", single.id]
    assert keys[0].key == keys[1].key
    assert KEY not in repr(keys) and "key=" not in repr(keys)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FAHEEM_ENCRYPTION_KEY": KEY, "FAHEEM_ENCRYPTION_KEYS": KEY}, "both set"),
        ({"FAHEEM_ENCRYPTION_KEY": "not base64!"}, "is not base64"),
        ({"FAHEEM_ENCRYPTION_KEY": base64.b64encode(b"short").decode()}, "5 bytes once base64-decoded"),
        ({"FAHEEM_ENCRYPTION_KEYS": f"a:{KEY},,b:{KEY}"}, "entry 2 is empty"),
        ({"FAHEEM_ENCRYPTION_KEYS": f"bad id:{KEY}"}, 'key id "bad id"'),
        ({"FAHEEM_ENCRYPTION_KEYS": f"a:{KEY},a:{KEY}"}, 'key id "a" twice'),
    ],
)
def test_a_malformed_key_says_which_variable_and_what(env: dict[str, str], message: str) -> None:
    with pytest.raises(EncryptionConfigError, match=message):
        parse_encryption_keys(env)
