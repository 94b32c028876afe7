"""Errors the HTTP layer turns into JSON responses with a status code."""


class WorkerError(Exception):
    """A failure with an HTTP status; the message says what failed and what to do."""

    status = 500
    kind = "InternalServerError"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


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
    """The worker cannot start (bad --model, missing vocab file…); printed and exit code 2."""
