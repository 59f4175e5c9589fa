"""faheemcode for Python: drive the durable agent conversations a faheemcode worker runs on Temporal.

Nothing runs the agent here: every call is a Temporal client call to the same ``conversation``
workflow the TypeScript CLI and SDK use. Start with :mod:`faheemcode.sdk`.
"""

from .errors import (
    ConversationClosedError,
    ConversationNotFoundError,
    DecryptionError,
    EncryptionConfigError,
    FaheemError,
    InvalidRequestError,
    PayloadUnavailableError,
    ServerUnreachableError,
)

__all__ = [
    "ConversationClosedError",
    "ConversationNotFoundError",
    "DecryptionError",
    "EncryptionConfigError",
    "FaheemError",
    "InvalidRequestError",
    "PayloadUnavailableError",
    "ServerUnreachableError",
]
