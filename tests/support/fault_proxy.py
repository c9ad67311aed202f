"""A fault-injecting HTTP proxy for the object-store emulators: a busy, flaky store on 127.0.0.1.

    python tests/support/fault_proxy.py --upstream http://127.0.0.1:9023 --port 9024
    curl -X POST 127.0.0.1:9024/_faults -d '{"rate": 0.2, "kinds": ["503", "reset"]}'
    curl 127.0.0.1:9024/_faults          # the settings, and what was injected so far

Real GCS and S3 answer 429 and 5xx, reset connections and stall; emulators never do. Clients
pointed at the proxy (`STORAGE_EMULATOR_HOST`, `AWS_ENDPOINT_URL`) get, for a share (`rate`) of
their requests, one of:

- `503`, `429`: the answer a busy service gives (nothing reaches the emulator);
- `reset`: the connection reset before the request is forwarded;
- `lost-reply`: the request forwarded and done, then the connection reset before the answer (a
  write that succeeded while its client saw it fail: its retry must recognise its own write);
- `slow`: the answer held back `slow_s` seconds.

`script` gives the faults of the next requests, in order (`pass`: none), before any drawn: a test
that needs one exact fault.
Beside the random share, `lose_uploads` answers 404 to every request of an upload session (a GCS
resumable upload's `upload_id`, an S3 multipart upload's `uploadId`), as a service that lost it
does; and `refuse_s` answers 503 to everything for that many seconds from now (an outage). The
proxy runs as its own process (so the tests' interpreter does not slow it down) and is steered
through `/_faults`; tests use `tests.support.emulators.faulty(store)`.

fake-gcs-server finalizes a resumable upload when asked for its status (`Content-Range: bytes
*/*`) instead of answering 308 with the bytes it holds, as GCS does (fsouza/fake-gcs-server
#1362, #2354): after a fault, a client that asks where to resume would publish a truncated object.
It also answers 404 to a request re-sent to a session it completed, and appends bytes re-sent
after a lost answer a second time. The proxy keeps GCS's semantics for it (`Sessions`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

CONTROL = "/_faults"
KINDS = ("503", "429", "reset", "lost-reply", "slow")
PASS = "pass"  # in a script: forward this request faithfully
# Hop-by-hop headers: the proxy frames its own messages.
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "expect"}
# Answers the proxy gives itself: status, S3's error code, message.
ERRORS = {
    "503": (503, "SlowDown", "Please reduce your request rate."),
    "refused": (503, "ServiceUnavailable", "The service is unavailable."),
    "429": (429, "TooManyRequests", "Too many requests."),
    "lost-upload": (404, "NoSuchUpload", "The upload session does not exist."),
}
_RANGE = re.compile(r"bytes=0-(\d+)")
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)")


class Faults:
    """What to inject (changed at run time through `/_faults`) and what was injected."""

    def __init__(self, seed: int) -> None:
        self.lock = threading.Lock()
        self.random = random.Random(seed)
        self.rate = 0.0
        self.kinds: tuple[str, ...] = KINDS
        self.slow_s = 1.0
        self.lose_uploads = False
        self.refuse_until = 0.0
        self.script: list[str] = []  # faults for the next requests, in order, before any drawn
        self.requests = 0
        self.injected: dict[str, int] = {}

    def settings(self) -> dict[str, object]:
        return {
            "rate": self.rate,
            "kinds": list(self.kinds),
            "slow_s": self.slow_s,
            "lose_uploads": self.lose_uploads,
            "refusing_s": max(0.0, self.refuse_until - time.monotonic()),
            "script": list(self.script),
            "requests": self.requests,
            "injected": dict(self.injected),
        }

    def update(self, change: dict[str, object]) -> None:
        with self.lock:
            if "seed" in change:
                self.random.seed(int(change["seed"]))  # type: ignore[arg-type]
            if "rate" in change:
                self.rate = float(change["rate"])  # type: ignore[arg-type]
            if "kinds" in change:
                kinds = tuple(str(k) for k in change["kinds"])  # type: ignore[attr-defined]
                unknown = set(kinds) - set(KINDS)
                if unknown:
                    raise ValueError(f"unknown fault kinds {sorted(unknown)}")
                self.kinds = kinds
            if "slow_s" in change:
                self.slow_s = float(change["slow_s"])  # type: ignore[arg-type]
            if "lose_uploads" in change:
                self.lose_uploads = bool(change["lose_uploads"])
            if "script" in change:
                script = [str(k) for k in change["script"]]  # type: ignore[attr-defined]
                unknown = set(script) - {*KINDS, PASS}
                if unknown:
                    raise ValueError(f"unknown fault kinds {sorted(unknown)}")
                self.script = script
            if "refuse_s" in change:
                self.refuse_until = time.monotonic() + float(change["refuse_s"])  # type: ignore[arg-type]
            if change.get("reset_counts"):
                self.requests, self.injected = 0, {}

    def draw(self, upload_session: bool) -> str | None:
        """The fault for the next request, if any (counted)."""
        with self.lock:
            self.requests += 1
            if time.monotonic() < self.refuse_until:
                kind: str | None = "refused"
            elif upload_session and self.lose_uploads:
                kind = "lost-upload"
            elif self.script:
                kind = self.script.pop(0)
                kind = None if kind == PASS else kind
            elif self.kinds and self.random.random() < self.rate:
                kind = self.random.choice(self.kinds)
            else:
                kind = None
            if kind is not None:
                self.injected[kind] = self.injected.get(kind, 0) + 1
            return kind


Reply = tuple[int, list[tuple[str, str]], bytes]


class Sessions:
    """GCS's resumable-upload semantics, which fake-gcs-server lacks, kept from what the emulator
    acknowledged of each session: the bytes it holds, and its final answer once complete.

    GCS answers a status query (`Content-Range: bytes */*`) with 308 and the range it holds; a
    request to a complete session with the object; bytes it already holds (a request re-sent
    after a lost answer) are not written twice. fake-gcs-server finalizes on a status query,
    answers 404 to a complete session and appends re-sent bytes again: the proxy answers those
    requests itself, and forwards only the bytes the emulator does not hold yet."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: dict[str, int] = {}
        self.final: dict[str, Reply] = {}

    def plan(
        self, upload_id: str, content_range: str | None, body: bytes
    ) -> tuple[Reply | None, str | None, bytes]:
        """GCS's own answer to this request, or None and what to forward (range and bytes)."""
        with self.lock:
            if upload_id in self.final:
                return self.final[upload_id], None, b""
            held = self.held.get(upload_id, 0)
        match = _CONTENT_RANGE.fullmatch(content_range or "")
        if match is None:
            return None, content_range, body
        first, last, total = match[1], match[2], match[3]
        holding: Reply = (308, [("Range", f"bytes=0-{held - 1}")] if held else [], b"")
        if first is None:  # a status query, or "finish at N" once all N bytes are sent
            return (holding if total == "*" or held < int(total) else None), content_range, body
        start, end = int(first), int(last)
        if start > held or end < held:  # a gap, or nothing new: say where to go on from
            return holding, None, b""
        return None, f"bytes {held}-{end}/{total}", body[held - start :]

    def record(self, upload_id: str, sent: str | None, status: int, headers, body: bytes) -> None:
        with self.lock:
            if status in (200, 201):
                self.final[upload_id] = (status, headers, body)
            elif status == 308:
                match = _RANGE.fullmatch(dict(headers).get("Range", "") or "")
                if match:
                    self.held[upload_id] = int(match[1]) + 1
                elif sent:  # an emulator that leaves the Range out: what was sent
                    range_sent = _CONTENT_RANGE.fullmatch(sent)
                    if range_sent and range_sent[2]:
                        self.held[upload_id] = int(range_sent[2]) + 1


class Proxy(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that drops its connection (curl resets idle ones) is no news."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def __init__(self, port: int, upstream: str, seed: int, log: str | None = None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.log = Path(log).open("a", buffering=1) if log else None  # noqa: SIM115 - for its life
        parsed = urlparse(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.faults = Faults(seed)
        self.sessions = Sessions()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body of an answer are two writes: with Nagle's algorithm the second
    # waits for the client's delayed ACK of the first, 40 ms an answer that no store adds.
    disable_nagle_algorithm = True
    server: Proxy

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the tests read /_faults for what happened

    def do_GET(self) -> None:
        self._handle()

    do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = do_GET  # noqa: N815

    def _handle(self) -> None:
        body = self._body()
        if self.path.startswith(CONTROL):
            self._control(body)
            return
        query = parse_qs(urlparse(self.path).query)
        upload_id = (query.get("upload_id") or [None])[0]
        multipart = "uploadId" in query
        fault = self.server.faults.draw(bool(upload_id) or multipart)
        if fault in ERRORS:
            status, code, message = ERRORS[fault]
            self._reply(status, *self._error(status, code, message))
            return
        if fault == "reset":
            self._reset()
            return
        if fault == "slow":
            time.sleep(self.server.faults.slow_s)
        sent = self.headers.get("Content-Range")
        if upload_id and self.command == "PUT":
            own, sent, body = self.server.sessions.plan(upload_id, sent, body)
            if own is not None:
                self._reply(*own)
                return
        status, headers, answer = self._forward(body, sent)
        if self.server.log is not None:
            self.server.log.write(f"{time.time():.3f} {self.command} {self.path} {status}\n")
        if upload_id:
            self.server.sessions.record(upload_id, sent, status, headers, answer)
        if fault == "lost-reply":
            self._reset()
            return
        self._reply(status, headers, answer)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _forward(self, body: bytes, content_range: str | None) -> Reply:
        connection = http.client.HTTPConnection(*self.server.upstream, timeout=120)
        try:
            skip = _HOP | {"content-range"}
            headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
            if content_range is not None:
                headers["Content-Range"] = content_range
            if body or self.command in ("PUT", "POST", "PATCH"):
                headers["Content-Length"] = str(len(body))
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            answer = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP]
            return response.status, kept, answer
        finally:
            connection.close()

    def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        length_given = False
        for name, value in headers:
            if name.lower() == "content-length":
                if self.command != "HEAD":
                    continue  # the body's own length below
                length_given = True
            self.send_header(name, value)
        if not length_given:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)
        self.wfile.flush()

    def _error(self, status: int, code: str, message: str) -> tuple[list[tuple[str, str]], bytes]:
        """An error as the service words it: S3's XML to a signed S3 request (a 429, which S3
        itself never sends, bare: as a proxy or gateway in front of it would), else GCS's JSON."""
        if self.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256"):
            if status == 429:  # not S3's own answer (that is 503 SlowDown): a bare one
                return [], b""
            body = f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
            return [("Content-Type", "application/xml")], body.encode()
        body = json.dumps({"error": {"code": status, "message": message}})
        return [("Content-Type", "application/json")], body.encode()

    def _reset(self) -> None:
        """Close the connection with a TCP reset (SO_LINGER 0), no answer."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _control(self, body: bytes) -> None:
        if self.command == "POST":
            try:
                self.server.faults.update(json.loads(body or b"{}"))
            except (ValueError, TypeError) as exc:
                self._reply(400, [], str(exc).encode())
                return
        answer = json.dumps(self.server.faults.settings()).encode()
        self._reply(200, [("Content-Type", "application/json")], answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="the emulator's URL")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", help="append a line per forwarded request to this file")
    args = parser.parse_args()
    Proxy(args.port, args.upstream, args.seed, args.log).serve_forever()


if __name__ == "__main__":
    main()
