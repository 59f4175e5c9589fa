"""Every string in a fetched history, payloads decoded, so that a search for a secret finds it
wherever it hides (payload data is bytes; in JSON it would be base64 and a search would miss it)."""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHistory

from faheemcode.codec import EncryptionCodec


def _strings(message: Message, codec: EncryptionCodec | None) -> Iterator[str]:
    if isinstance(message, Payload):
        for k, v in message.metadata.items():
            yield k
            yield v.decode("utf-8", "replace")
        yield message.data.decode("utf-8", "replace")
        if codec is not None and message.metadata.get("encoding") == b"binary/encrypted":
            yield from _strings(codec.decrypt(message), codec)
        return
    for descriptor, value in message.ListFields():
        if descriptor.message_type is not None and descriptor.message_type.GetOptions().map_entry:
            values = list(value.keys()) + list(value.values())
        elif _repeated(descriptor):
            values = list(value)
        else:
            values = [value]
        for v in values:
            if isinstance(v, Message):
                yield from _strings(v, codec)
            elif isinstance(v, bytes):
                yield v.decode("utf-8", "replace")
            elif isinstance(v, str):
                yield v


def _repeated(descriptor: FieldDescriptor) -> bool:
    # protobuf 6 has `is_repeated`; earlier versions only `label`.
    flag = getattr(descriptor, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(descriptor.label == FieldDescriptor.LABEL_REPEATED)  # type: ignore[attr-defined]


def history_text(history: WorkflowHistory, codec: EncryptionCodec | None = None) -> str:
    """The history's text, with encrypted payloads also decrypted when ``codec`` is given."""
    return "\n".join(s for event in history.events for s in _strings(event, codec))
