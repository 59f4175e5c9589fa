"""Images from Python: checked as the TypeScript client checks them, and stored so that the
TypeScript worker reads them (the same key, the same sealed form, encrypted and bound with a key)."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from faheemcode.connection import LOOP, _connect
from faheemcode.errors import InvalidRequestError
from faheemcode.images import sniff_image, store_images
from faheemcode.sdk import LLM, Agent, Conversation, ExecutionStatus, Tool

from conftest import ROOT, Stack, start_stack
from history_text import history_text

ONE_PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def read_in_typescript(env: dict[str, str], sha256: str) -> bytes:
    """The image's bytes as the TypeScript worker reads them (readImage: unsealed, hash checked)."""
    script = (
        "const { readImage } = await import('./src/images/store.ts');"
        "const { storeSettings } = await import('./src/settings/store.ts');"
        f"const bytes = await readImage(storeSettings(process.env), {{ sha256: '{sha256}' }});"
        "process.stdout.write(Buffer.from(bytes).toString('base64'));"
    )
    out = subprocess.run(
        ["node", "--import", "tsx", "--input-type=module", "-e", script],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return base64.b64decode(out.stdout)


def test_formats_come_from_the_bytes() -> None:
    assert sniff_image(ONE_PIXEL) == "image/png"
    assert sniff_image(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff_image(b"GIF89a\x01\x00") == "image/gif"
    assert sniff_image(b"RIFF\x08\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_image(b"<svg/>") is None


@pytest.mark.parametrize("key", [None, base64.b64encode(bytes(range(32))).decode()])
def test_stored_as_the_typescript_worker_reads_them(tmp_path: Path, key: str | None) -> None:
    env = {"FAHEEM_HOME": str(tmp_path), **({"FAHEEM_ENCRYPTION_KEY": key} if key else {})}
    picture = tmp_path / "shot.png"
    picture.write_bytes(ONE_PIXEL)
    [ref] = store_images([picture], env)
    sha = hashlib.sha256(ONE_PIXEL).hexdigest()
    assert ref == {"sha256": sha, "mimeType": "image/png", "size": len(ONE_PIXEL), "name": "shot.png"}
    stored = (tmp_path / "objects" / "images" / sha).read_bytes()
    assert (ONE_PIXEL[:8] in stored) is (key is None), "encrypted with a key, in clear without"
    assert read_in_typescript(env, sha) == ONE_PIXEL


def test_refused_clearly(tmp_path: Path) -> None:
    env = {"FAHEEM_HOME": str(tmp_path)}
    with pytest.raises(InvalidRequestError, match=r"no such file"):
        store_images([tmp_path / "none.png"], env)
    with pytest.raises(InvalidRequestError, match=r"not a PNG, JPEG, GIF or WebP"):
        store_images([b"%PDF-1.7"], env)
    with pytest.raises(InvalidRequestError, match=r"at most 10 images"):
        store_images([ONE_PIXEL] * 11, env)
    with pytest.raises(InvalidRequestError, match=r"at most 5242880 bytes"):
        store_images([ONE_PIXEL + bytes(5 * 1024 * 1024)], env)


async def _history(env: dict[str, str], conversation_id: str):  # type: ignore[no-untyped-def]
    client = await _connect(env)
    return await client.get_workflow_handle(conversation_id).fetch_history()


@pytest.mark.e2e
def test_sent_from_python_the_worker_answers_and_history_keeps_the_reference(
    tmp_path: Path, stack_factory: list[Stack]
) -> None:
    stack = start_stack("python-images")
    stack_factory.append(stack)
    env = stack.env
    picture = ONE_PIXEL + os.urandom(2000)  # bytes found nowhere else
    llm = LLM(usage_id="agent", model=env["LLM_MODEL"], base_url=env["LLM_BASE_URL"])
    conversation = Conversation(Agent(llm=llm, tools=[Tool(name="file_editor")]), workspace=tmp_path, env=env)
    conversation.send_message("Look at this, then write hello.txt.", images=[picture])
    conversation.run()
    assert conversation.state.execution_status is ExecutionStatus.FINISHED
    assert (tmp_path / "hello.txt").read_text() == "Hello, World!\n"
    sha = hashlib.sha256(picture).hexdigest()
    message = next(e for e in conversation.events() if e.kind == "message")
    assert message.get("images") == [
        {"sha256": sha, "mimeType": "image/png", "size": len(picture), "name": "image 1"}
    ]
    history = history_text(LOOP.run(_history(env, conversation.id)))
    assert sha in history
    assert base64.b64encode(picture).decode() not in history
    conversation.close()
