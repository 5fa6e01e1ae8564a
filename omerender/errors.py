"""The errors omerender raises, in one small hierarchy.

    OmeRenderError                  base of everything omerender raises on purpose
    ├── InvalidObjectError          an input object does not fit its schema (kind, name, field paths)
    ├── InvalidArgumentError        a public function was called with an argument of the wrong type
    ├── MissingExtraError           a function needs an extra that is not installed (an ImportError)
    ├── RenderBlocked               the replica cannot render; carries one of the eight seed reasons
    ├── RevisionCollisionError      two different payloads want one ControllerRevision name
    ├── deploy.DeployConfigError    the operator's `deploy` defaults are unusable (Go's text)
    ├── gotemplate.GoTemplateError  Go's template parser or executor refuses a placeholder template
    └── gojson.GoJSONError          a value Go's decoder would refuse for its Kubernetes type (with path)
        ├── GoTypeError, InvalidQuantityError, InvalidTimeError

Callers that preview renders catch ``OmeRenderError``; the reconciler turns ``RenderBlocked`` into the
``Ready=False`` condition and a Warning event with the same reason and message. Any other exception out
of omerender is a bug (the property tests assert this).
"""

from __future__ import annotations

from enum import StrEnum

from omerender._records import record

__all__ = [
    "BlockReason",
    "FieldProblem",
    "InvalidArgumentError",
    "InvalidObjectError",
    "MissingExtraError",
    "OmeRenderError",
    "RenderBlocked",
    "RevisionCollisionError",
]


class OmeRenderError(Exception):
    """Base class of every error omerender raises on purpose."""


@record
class FieldProblem:
    """One thing wrong with one field: ``path`` is dotted (``spec.runners[0].size``)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class InvalidObjectError(OmeRenderError):
    """An input object does not fit its schema. Names the object and every failing field."""

    def __init__(
        self, kind: str, name: str, namespace: str | None, problems: tuple[FieldProblem, ...]
    ) -> None:
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.problems = problems
        where = f"{namespace}/{name}" if namespace else name
        detail = "; ".join(str(p) for p in problems)
        super().__init__(f"{kind} {where or '<unnamed>'} is invalid: {detail}")


class InvalidArgumentError(OmeRenderError, TypeError):
    """A public function got an argument of the wrong type (a caller's bug, named with the fix).

    Also a ``TypeError``, so code that treats wrong argument types the Python way still catches it.
    """

    def __init__(
        self, function: str, argument: str, expected: str, got: object, fix: str | None = None
    ) -> None:
        self.function = function
        self.argument = argument
        super().__init__(
            f"{function}(): {argument} must be {expected}, got {type(got).__name__}; {fix or f'pass {expected}'}"
        )


class MissingExtraError(OmeRenderError, ImportError):
    """A function needs an optional extra that is not installed, raised when it is called (not at the
    first use deep inside): the message names the function, the missing module and the command that
    installs it. Also an ``ImportError``, so code that treats a missing module the Python way catches it.
    """

    def __init__(self, function: str, module: str, extra: str) -> None:
        self.function = function
        self.extra = extra
        super().__init__(
            f"{function}() needs the {extra!r} extra ({module} is not installed): "
            f"pip install 'omerender[{extra}]'",
            name=module,
        )


class BlockReason(StrEnum):
    """Why a replica has no pod templates it can run (the seed's Troubleshooting table)."""

    TEMPLATE_SOURCE_MISSING = "TemplateSourceMissing"
    MODEL_NOT_FOUND = "ModelNotFound"
    MODEL_DISABLED = "ModelDisabled"
    RUNTIME_NOT_FOUND = "RuntimeNotFound"
    RUNTIME_DISABLED = "RuntimeDisabled"
    RUNTIME_SELECTION_FAILED = "RuntimeSelectionFailed"
    RUNTIME_PIECE_MISSING = "RuntimePieceMissing"
    RENDER_FAILED = "RenderFailed"


class RenderBlocked(OmeRenderError):
    """The replica cannot render. ``reason`` and ``message`` are what OME writes on ``Ready=False``."""

    def __init__(self, reason: BlockReason, message: str) -> None:
        self.reason = reason
        self.message = message
        super().__init__(f"{reason.value}: {message}")


class RevisionCollisionError(OmeRenderError):
    """A ControllerRevision name is taken by different bytes even after bumping the collision count."""

    def __init__(self, name: str, collision_count: int) -> None:
        self.name = name
        self.collision_count = collision_count
        super().__init__(
            f"ControllerRevision {name} collides with different data at collisionCount {collision_count}"
        )
