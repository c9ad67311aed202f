"""Start gcp-storage-emulator serving requests concurrently: `python launch.py start --port P ...`.

The emulator answers on one thread (`http.server.HTTPServer`). pyarrow's GCS client opens a
random-access file with a download of the whole object that it abandons for ranged reads; on one
thread the emulator blocks writing that download once it outgrows the socket buffers (objects of
a few MiB) and never answers the ranged read: the client times out after two minutes. Threads
(one a connection, as `ThreadingHTTPServer` gives) let the ranged read through.
"""

from __future__ import annotations

import sys
from http import server

from gcp_storage_emulator.__main__ import main

server.HTTPServer = server.ThreadingHTTPServer

if __name__ == "__main__":
    main(sys.argv[1:])
