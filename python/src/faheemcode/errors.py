"""Errors of the faheemcode Python client. Each says what went wrong and what to do."""

from __future__ import annotations


class FaheemError(Exception):
    """Base of every error this package raises; ``type`` is the same name the TypeScript side uses."""

    type = "faheem_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidRequestError(FaheemError):
    """The conversation refused the request (and says why), or the arguments are not valid."""

    type = "invalid_request"


class ConversationNotFoundError(FaheemError):
    """No conversation has this id on the server and namespace this process talks to."""

    type = "conversation_not_found"

    def __init__(self, conversation_id: str) -> None:
        super().__init__(
            f"no conversation {conversation_id} (check the id, TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE)"
        )
        self.conversation_id = conversation_id


class ConversationClosedError(FaheemError):
    """The conversation's workflow has ended (closed, or its idle timeout passed); its history stays readable."""

    type = "conversation_closed"

    def __init__(self, conversation_id: str) -> None:
        super().__init__(
            f"conversation {conversation_id} is closed; start a new one (its events are still readable)"
        )
        self.conversation_id = conversation_id


class ServerUnreachableError(FaheemError):
    """The Temporal server did not answer at the configured address."""

    type = "server_unreachable"

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(
            f"cannot reach the Temporal server at {address}: {reason} "
            "(start one with `npx faheem server`, or set TEMPORAL_ADDRESS)"
        )
        self.address = address


class EncryptionConfigError(FaheemError):
    """FAHEEM_ENCRYPTION_KEY or FAHEEM_ENCRYPTION_KEYS is malformed."""

    type = "encryption_config"


class DecryptionError(FaheemError):
    """A payload cannot be decrypted with the keys this process has."""

    type = "decryption"


class PayloadUnavailableError(FaheemError):
    """A payload the conversation keeps outside Temporal's history cannot be read by this process."""

    type = "payload_unavailable"
