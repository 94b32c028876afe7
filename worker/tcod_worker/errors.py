"""Errors the HTTP layer turns into JSON responses with a status code."""


class WorkerError(Exception):
    """A failure with an HTTP status; the message says what failed and what to do."""

    status = 500
    kind = "InternalServerError"

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        #: What the client should change (sent as the error's "hint"; tcod run shows it).
        self.hint = hint


class BadRequest(WorkerError):
    status = 400
    kind = "BadRequestError"


class Unauthorized(WorkerError):
    status = 401
    kind = "AuthenticationError"


class PayloadTooLarge(WorkerError):
    status = 413
    kind = "PayloadTooLargeError"


class MethodNotAllowed(WorkerError):
    status = 405
    kind = "MethodNotAllowedError"

    def __init__(self, message: str, allow: str):
        super().__init__(message)
        self.allow = allow  # the route's methods, for the Allow header


class UnsupportedMediaType(WorkerError):
    status = 415
    kind = "UnsupportedMediaTypeError"


class NotFound(WorkerError):
    status = 404
    kind = "NotFoundError"


class StartupError(Exception):
    """The worker cannot start (bad --model, missing vocab file…); printed and exit code 2. `hint` says
    what to do; `file` (with `line` and `column` where known) is where the fault is, for the run that
    started the worker to report it at (--error-format json)."""

    def __init__(self, message: str, hint: str | None = None, file: str | None = None,
                 line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message, self.hint, self.file, self.line, self.column = message, hint, file, line, column

    def as_json(self) -> dict:
        return {k: v for k, v in {"message": self.message, "hint": self.hint, "file": self.file,
                                  "line": self.line, "column": self.column}.items() if v is not None}
