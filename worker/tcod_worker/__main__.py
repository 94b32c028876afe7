"""`python -m tcod_worker --model … --port …` (or under torchrun for data parallelism)."""

from __future__ import annotations

import signal
import sys
import threading

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


def main(argv: list[str] | None = None) -> int:
    opts = parse_options(argv)
    if not is_loopback(opts.host) and not opts.token:
        print(f"tcod-worker: refusing to listen on {opts.host} without a token: anyone who reaches it could train, "
              f"save and load your model. Pass --token (or TCOD_WORKER_TOKEN), or bind 127.0.0.1.", file=sys.stderr)
        return 2
    import torch

    from .comm import Comm
    from .errors import StartupError

    kind = opts.device if opts.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    comm = Comm.from_env(kind)
    from .worker import Worker

    try:
        worker = Worker(opts, comm)
    except StartupError as e:
        print(f"tcod-worker: {e}", file=sys.stderr)
        return 2
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
