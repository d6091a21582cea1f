"""How the engine runs teton's plugins (the provider and the language host): a gRPC server on a free local port,
the port on the first line of stdout, served until the engine interrupts it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from concurrent import futures

import grpc

MAX_MESSAGE = 1 << 30      # a program's resources may carry a device's whole config: no 4 MB gRPC limit


def serve_plugin(register: Callable[[grpc.Server], None], threads: int) -> None:
    """Serve what `register` adds to the server; return when the engine interrupts the plugin."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=threads),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    register(server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:          # the engine interrupts its plugins when it is done
        server.stop(0)
