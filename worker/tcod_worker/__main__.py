"""`python -m tcod_worker --model … --port …` (or under torchrun for data parallelism)."""

from __future__ import annotations

import json
import signal
import sys
import threading

from .errors import StartupError
from .model_config import check_model
from .options import parse_options


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and localhost; anything else (0.0.0.0, a LAN address, a name) is reachable from outside."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refuse(e: StartupError, error_format: str) -> int:
    """A refusal to start on stderr, exit code 2: for a person, or one JSON line for the run that started the worker."""
    if error_format == "json":
        print(json.dumps({"tcod_worker_error": e.as_json()}), file=sys.stderr)
    else:
        at = f" (line {e.line}, column {e.column})" if e.line is not None else ""
        print(f"tcod-worker: {e}{at}" + (f"\n  hint: {e.hint}" if e.hint else ""), file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    opts = parse_options(argv)
    if not is_loopback(opts.host) and not opts.token:
        print(f"tcod-worker: refusing to listen on {opts.host} without a token: anyone who reaches it could train, "
              f"save and load your model. Pass --token (or TCOD_WORKER_TOKEN), or bind 127.0.0.1.", file=sys.stderr)
        return 2
    # The models are checked before torch is imported: a bad config or folder is refused at once.
    try:
        for model in (opts.model, opts.teacher):
            if model is not None:
                check_model(model)
    except StartupError as e:
        return refuse(e, opts.error_format)
    import torch

    from .comm import Comm

    kind = opts.device if opts.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    comm = Comm.from_env(kind)
    from .worker import Worker

    try:
        worker = Worker(opts, comm)
    except StartupError as e:
        return refuse(e, opts.error_format)
    if comm.rank != 0:
        # Followers leave Ctrl-C / SIGTERM to rank 0, which broadcasts "shutdown" so every rank exits
        # cleanly (torchrun still SIGKILLs a follower whose rank 0 died).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        comm.follow(worker.handle)
        comm.shutdown()
        return 0
    from .server import serve

    try:
        server = serve(worker, opts.host, opts.port, opts.token, opts.max_body)
    except OSError as e:
        print(f"tcod-worker: cannot listen on {opts.host}:{opts.port}: {e}", file=sys.stderr)
        comm.shutdown()
        return 2

    def stop(_sig: int, _frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    # One line on stdout that a parent process can wait for (port 0 = an ephemeral port).
    print(f"tcod-worker listening on http://{host}:{port} model={worker.served_name} device={worker.device} "
          f"dtype={worker.dtype_name} world={comm.world}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        comm.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
