"""Images sent with a message: checked, then put in the object store by content hash.

As the TypeScript client does (src/images/): the format comes from the bytes (PNG, JPEG, GIF or
WebP), an image is at most 5 MB, a message carries at most 10; the bytes go to the object store
under ``images/<sha256>`` (``FAHEEM_OBJECT_STORE``, else ``$FAHEEM_HOME/objects``) as a serialized
Payload, encrypted and bound to that key when an encryption key is set; the workflow gets only the
references (``sha256``, ``mimeType``, ``size``, ``name``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Union

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload

from .codec import ENCRYPTED_ENCODING, IV_BYTES, KEY_ID_METADATA, EncryptionCodec, encryption_codec
from .errors import InvalidRequestError
from .payloads import FolderObjectStore, S3ObjectStore, faheem_home, object_store

#: The largest image, in bytes (Anthropic's limit), and the most images one message carries.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES_PER_MESSAGE = 10
#: What a bound object's associated data is, as the TypeScript side writes it.
ASSOCIATED_DATA_METADATA = "encryption-associated-data"
_BOUND_TO_KEY = b"store-key"

#: An image: a file's path, or its bytes (the format is read from them).
ImageInput = Union[str, "os.PathLike[str]", bytes]


def sniff_image(data: bytes) -> str | None:
    """The image type the magic bytes name (image/png, image/jpeg, image/gif, image/webp), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _seal(key: str, data: bytes, codec: EncryptionCodec | None) -> bytes:
    """The stored form at ``key``, byte-compatible with the TypeScript side's sealObject."""
    plain = Payload(metadata={"encoding": b"binary/plain"}, data=data)
    if codec is None:
        return plain.SerializeToString()
    first = codec.keys[0]
    nonce = os.urandom(IV_BYTES)
    associated = f"faheemcode store object\n{key}".encode()
    sealed = AESGCM(first.key).encrypt(nonce, plain.SerializeToString(), associated)
    return Payload(
        metadata={
            "encoding": ENCRYPTED_ENCODING,
            KEY_ID_METADATA: first.id.encode(),
            ASSOCIATED_DATA_METADATA: _BOUND_TO_KEY,
        },
        data=nonce + sealed,
    ).SerializeToString()


def _put(env: Mapping[str, str], key: str, body: bytes) -> None:
    store = object_store(env)
    if isinstance(store, S3ObjectStore):
        full = f"{store.prefix}/{key}" if store.prefix else key
        store._client().put_object(Bucket=store.bucket, Key=full, Body=body)
        return
    root = store.root if isinstance(store, FolderObjectStore) else faheem_home(env) / "objects"
    target = root.joinpath(*key.split("/"))
    if target.is_file():
        return  # the same bytes are there already (the key is their hash)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(body)
    os.replace(tmp, target)  # atomic: a reader never sees half an object


def store_images(
    images: Sequence[ImageInput] | None, env: Mapping[str, str] | None = None
) -> list[dict[str, object]]:
    """Checks the images of one message and stores them; their references, in order.

    Raises:
        InvalidRequestError: a missing file, a format not taken, an image over 5 MB, more than 10.
    """
    env = os.environ if env is None else env
    if not images:
        return []
    if len(images) > MAX_IMAGES_PER_MESSAGE:
        raise InvalidRequestError(
            f"message not sent: a message carries at most {MAX_IMAGES_PER_MESSAGE} images (it has {len(images)})"
        )
    codec = encryption_codec(env)
    refs: list[dict[str, object]] = []
    for i, image in enumerate(images, start=1):
        if isinstance(image, bytes):
            data, name = image, f"image {i}"
        else:
            path = Path(os.fspath(image))
            if not path.is_file():
                raise InvalidRequestError(f"message not sent: {path}: no such file")
            if path.stat().st_size > MAX_IMAGE_BYTES:
                raise InvalidRequestError(
                    f"message not sent: {path} is {path.stat().st_size} bytes; an image may have at most "
                    f"{MAX_IMAGE_BYTES} bytes (5 MB)"
                )
            data, name = path.read_bytes(), path.name
        if len(data) > MAX_IMAGE_BYTES:
            raise InvalidRequestError(
                f"message not sent: {name} is {len(data)} bytes; an image may have at most {MAX_IMAGE_BYTES} bytes (5 MB)"
            )
        mime = sniff_image(data)
        if mime is None:
            raise InvalidRequestError(
                f"message not sent: {name} is not a PNG, JPEG, GIF or WebP image (its first bytes say so)"
            )
        sha256 = hashlib.sha256(data).hexdigest()
        key = f"images/{sha256}"
        _put(env, key, _seal(key, data, codec))
        refs.append({"sha256": sha256, "mimeType": mime, "size": len(data), "name": name})
    return refs
