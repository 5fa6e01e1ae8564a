"""The bounded-cost YAML reader, now :mod:`omerender.yamlsafe` (the loader's); kept under its old name."""

from omerender.yamlsafe import (
    _PLAIN_DOCUMENT_MAX,
    MAX_FILE_BYTES,
    YamlLimitError,
    _Loader,
    _plainly_within_limits,
    load_documents,
    split_documents,
)

__all__ = [
    "MAX_FILE_BYTES",
    "_PLAIN_DOCUMENT_MAX",
    "YamlLimitError",
    "_Loader",
    "_plainly_within_limits",
    "load_documents",
    "split_documents",
]
