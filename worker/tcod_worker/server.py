"""HTTP layer: standard-library ThreadingHTTPServer, JSON in and out, bearer-token check. Model work
runs one request at a time on one dedicated thread (GPU work does not interleave, and per-thread
CUDA state such as cuBLAS handles and their heuristics caches stays warm across requests; a fresh
thread per connection sampled about 4× slower on an H200: 1330 vs 5586 tokens/s in scripts/gpu_smoke.py). /health never waits.

Errors are OpenAI-shaped: {"error": {"message", "type", "code"}} (and "hint", what to change, where the worker has one) with status 400 (bad input),
401 (token), 404 (route or model), 405 (a route's other method), 413 (body over the limit), 415 (a body
that is not `Content-Type: application/json`), 500 (anything else, with the exception named).
Responses are strict JSON: a float that is not finite (a top-k log-probability outside the top-p
nucleus, a loss that overflowed) is written as -9999.0 for -inf (vLLM's convention) and null otherwise.
"""

from __future__ import annotations

import hmac
import json
import math
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from .coalesce import Coalescer
from .errors import (BadRequest, MethodNotAllowed, NotFound, PayloadTooLarge, Unauthorized, UnsupportedMediaType,
                     WorkerError)

#: Default cap on a request body (--max-body-mb); checked from Content-Length before anything is read.
MAX_BODY = 512 * 1024 * 1024
#: Seconds a connection may sit idle mid-request before it is dropped (never a hang).
SOCKET_TIMEOUT = 300


def make_routes(worker: Any) -> dict[tuple[str, str], Callable[[Any], Any]]:
    return {
        ("GET", "/health"): lambda _b: {"status": "ok"},
        ("GET", "/info"): lambda _b: worker.info(),
        ("GET", "/v1/models"): lambda _b: worker.models(),
        ("POST", "/tokenize"): worker.tokenize,
        ("POST", "/detokenize"): worker.detokenize,
        ("POST", "/sample"): worker.sample,
        ("POST", "/score"): worker.score,
        ("POST", "/forward_backward"): worker.forward_backward,
        ("POST", "/optim_step"): worker.optim_step,
        ("POST", "/save"): worker.save,
        ("POST", "/load"): worker.load,
        ("POST", "/v1/completions"): worker.completions,
    }


#: Routes that need no model lock (pure reads of static facts).
LOCK_FREE = {"/health", "/v1/models", "/tokenize", "/detokenize"}
#: Routes validated on their HTTP thread that queue their model work themselves (worker.coalescer:
#: concurrent requests run as one batch on the model thread).
SELF_SCHEDULED = {"/sample", "/score"}


def make_handler(worker: Any, token: str | None, model_thread: ThreadPoolExecutor,
                 max_body: int = MAX_BODY) -> type[BaseHTTPRequestHandler]:
    routes = make_routes(worker)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "tcod-worker"
        # TCP_NODELAY: the headers and the body go out in two writes; with Nagle's algorithm the body
        # waits for the client's delayed ACK of the headers (~40 ms a response on Linux).
        disable_nagle_algorithm = True
        timeout = SOCKET_TIMEOUT

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet by default; errors are logged below
            pass

        def _send(self, status: int, payload: Any, close: bool = False, headers: dict[str, str] | None = None) -> None:
            data = dump_json(payload)
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if close:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def _error(self, e: WorkerError, unread_body: bool) -> None:
            # A refused request's body is unread: close the connection rather than parse it as the next request.
            if unread_body:
                self.close_connection = True
            extra = {"Allow": e.allow} if isinstance(e, MethodNotAllowed) else None
            body = {"message": e.message, "type": e.kind, "code": e.status, **({"hint": e.hint} if e.hint else {})}
            self._send(e.status, {"error": body}, close=unread_body,
                       headers=extra)

        def _dispatch(self, method: str) -> None:
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            unread = method != "GET"
            try:
                # Route, token and size are checked from the request line and headers alone: nothing
                # of a body is read (let alone parsed) for a request that will be refused.
                route = routes.get((method, path))
                if route is None and any(p == path for (_m, p) in routes):
                    allow = ", ".join(sorted(m for (m, p) in routes if p == path))
                    raise MethodNotAllowed(f"{method} {path} is not served; use {allow}", allow)
                if route is None:
                    known = sorted({p for (_m, p) in routes})
                    raise NotFound(f"no route {method} {path}; routes: {', '.join(known)}")
                if token is not None and path != "/health":
                    got = self.headers.get("Authorization", "")
                    if not hmac.compare_digest(got.encode(), f"Bearer {token}".encode()):
                        raise Unauthorized("missing or wrong bearer token (send `Authorization: Bearer <token>`)")
                body: Any = None
                if method == "POST":
                    raw = self._read_body(max_body)
                    unread = False
                    body = parse_json(raw)
                if path in LOCK_FREE or path in SELF_SCHEDULED:
                    result = route(body)
                else:
                    result = model_thread.submit(route, body).result()
                self._send(200, result)
            except WorkerError as e:
                self._error(e, unread)
            except Exception as e:  # noqa: BLE001 - a 500 naming the failure, never a dropped connection
                traceback.print_exc(file=sys.stderr)
                err = WorkerError(f"{type(e).__name__} in {method} {path}: {e}")
                self._error(err, unread)

        def _read_body(self, limit: int) -> bytes:
            length = self.headers.get("Content-Length")
            if self.headers.get("Transfer-Encoding"):
                raise BadRequest("chunked request bodies are not accepted; send Content-Length")
            if length is None:
                raise BadRequest("missing Content-Length header")
            try:
                n = int(length)
            except ValueError:
                raise BadRequest(f"Content-Length {length[:40]!r} is not a number") from None
            if n < 0:
                raise BadRequest(f"Content-Length {n} is negative")
            if n > limit:
                raise PayloadTooLarge(f"request body of {n} bytes is over this worker's limit of {limit} bytes "
                                      f"(--max-body-mb)")
            # JSON only: a browser page may POST text/plain (or a typeless blob) to 127.0.0.1 without a
            # CORS preflight, but not application/json, so this also keeps web pages off a token-less worker.
            ctype = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                raise UnsupportedMediaType(f"request bodies must be sent as Content-Type: application/json, got "
                                           f"{(self.headers.get('Content-Type') or 'none')[:80]!r}")
            raw = self.rfile.read(n)
            if len(raw) != n:
                raise BadRequest(f"request body ended after {len(raw)} of {n} bytes")
            return raw

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._dispatch("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._dispatch("POST")

        # Any other method gets a JSON 405 (a known route) or 404, not http.server's HTML 501.
        def do_PUT(self) -> None:  # noqa: N802
            self._dispatch("PUT")

        def do_PATCH(self) -> None:  # noqa: N802
            self._dispatch("PATCH")

        def do_DELETE(self) -> None:  # noqa: N802
            self._dispatch("DELETE")

        def do_OPTIONS(self) -> None:  # noqa: N802 - no CORS: a preflight is refused, so browsers send nothing
            self._dispatch("OPTIONS")

    return Handler


def _no_constant(name: str) -> Any:
    raise BadRequest(f"request body is not valid JSON: {name} is not a JSON number (send a finite number or null)")


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"{}", parse_constant=_no_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadRequest(f"request body is not valid JSON: {e}") from e
    except RecursionError:
        raise BadRequest("request body is nested too deeply") from None
    except ValueError as e:  # an integer literal of more than 4300 digits (int's string-conversion limit)
        raise BadRequest(f"request body is not valid JSON here: {str(e).split(';')[0]}") from None


def _finite(x: Any) -> Any:
    """`x` with every non-finite float replaced: -inf by -9999.0 (vLLM's stand-in for a log-probability
    of zero, which tcod's client reads as such), +inf and NaN by null."""
    if isinstance(x, float):
        return x if math.isfinite(x) else (-9999.0 if x == float("-inf") else None)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def dump_json(payload: Any) -> bytes:
    """Strict JSON (no NaN/Infinity, which JSON.parse refuses); the common all-finite case costs one dumps."""
    try:
        return json.dumps(payload, allow_nan=False).encode("utf-8")
    except ValueError:
        return json.dumps(_finite(payload), allow_nan=False).encode("utf-8")


class WorkerServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    #: listen() backlog: hundreds of episodes may connect at once (the default 5 resets connections).
    request_queue_size = 1024


def serve(worker: Any, host: str, port: int, token: str | None, max_body: int = MAX_BODY) -> WorkerServer:
    model_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tcod-model")
    worker.coalescer = Coalescer(model_thread)
    return WorkerServer((host, port), make_handler(worker, token, model_thread, max_body))
