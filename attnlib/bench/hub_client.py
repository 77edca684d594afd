"""The hub load test's wire: HTTP and websocket calls through the hub, and a kernel driven as JupyterLab does.

Used by `python -m attnlib.bench hub` (hub/bench.py) and by the hub's security tests (tests/hub/).
"""
from __future__ import annotations

import asyncio
import json
import struct
import time
import uuid

MB = 1024 * 1024


class Client:
    """HTTP and websocket calls to the hub and the students' servers through the hub's proxy."""

    def __init__(self, base: str, concurrency: int):
        from tornado.httpclient import AsyncHTTPClient

        AsyncHTTPClient.configure(None, max_clients=max(16, 4 * concurrency))
        self.http = AsyncHTTPClient()
        self.base = base

    async def call(self, method: str, path: str, token: str = "", body: object = None, timeout: float = 60,
                   expect: tuple[int, ...] = (200,)) -> object:
        """JSON in, JSON out; raises RuntimeError naming the call if the status is not expected."""
        from tornado.httpclient import HTTPClientError

        headers = {"Authorization": f"token {token}"} if token else {}
        data = json.dumps(body) if body is not None else ("" if method in ("POST", "PUT", "PATCH") else None)
        try:
            r = await self.http.fetch(self.base + path, method=method, headers=headers, body=data,
                                      request_timeout=timeout, raise_error=False, allow_nonstandard_methods=True)
        except (HTTPClientError, OSError, asyncio.TimeoutError) as exc:
            raise RuntimeError(f"{method} {path}: {exc}") from None
        if r.code not in expect:
            raise RuntimeError(f"{method} {path}: HTTP {r.code} {(r.body or b'')[:200]!r}")
        return json.loads(r.body) if r.body else None

    async def websocket(self, path: str, token: str):
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = "ws" + self.base[len("http"):] + path
        return await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"},
                                                   request_timeout=120), max_message_size=256 * MB)


def _decode(frame) -> dict:
    """A kernel message from a websocket frame: JSON text, or jupyter_server's binary framing."""
    if isinstance(frame, str):
        return json.loads(frame)
    nbufs = struct.unpack("!I", frame[:4])[0]
    offsets = struct.unpack("!" + "I" * nbufs, frame[4 : 4 * (nbufs + 1)])
    end = offsets[1] if nbufs > 1 else None
    return json.loads(frame[offsets[0] : end].decode())


class KernelDied(RuntimeError):
    """The server restarted the kernel or gave it up while a request was running (e.g. killed over its memory)."""


class Kernel:
    """The student's kernel, driven through its websocket as JupyterLab does."""

    def __init__(self, ws, username: str):
        self.ws = ws
        self.username = username
        self.session = uuid.uuid4().hex

    def _send(self, msg_type: str, content: dict, channel: str = "shell") -> str:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "username": self.username, "session": self.session, "msg_type": msg_type,
                  "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content,
                                          "channel": channel, "buffers": []}))
        return msg_id

    async def _until_done(self, msg_id: str, reply_type: str, deadline: float) -> tuple[dict, list[str], dict | None]:
        """Read until the reply to msg_id and its iopub idle; return (reply content, stdout, error content)."""
        reply, idle, out, error = None, False, [], None
        while reply is None or not idle:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no {reply_type} within the deadline")
            frame = await asyncio.wait_for(self.ws.read_message(), left)
            if frame is None:
                raise RuntimeError("the kernel's websocket closed")
            if isinstance(frame, str) and msg_id not in frame and '"execution_state"' not in frame:
                continue  # another request's message: skip parsing it (a widget's can be megabytes)
            msg = _decode(frame)
            kind = msg["header"]["msg_type"]
            if kind == "status" and msg["content"].get("execution_state") in ("restarting", "dead"):
                raise KernelDied(f"the kernel died while running (the server says {msg['content']['execution_state']})")
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if kind == reply_type:
                reply = msg["content"]
            elif kind == "status" and msg["content"].get("execution_state") == "idle":
                idle = True
            elif kind == "stream":
                out.append(msg["content"].get("text", ""))
            elif kind == "error":
                error = msg["content"]
        return reply, out, error

    async def ready(self, deadline: float) -> None:
        """Wait for the kernel to answer kernel_info (it may still be importing when the socket opens)."""
        while True:
            msg_id = self._send("kernel_info_request", {})
            try:
                await self._until_done(msg_id, "kernel_info_reply", min(deadline, time.monotonic() + 10))
                return
            except KernelDied:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(1)  # a restarting kernel: ask again once it is back
            except (RuntimeError, asyncio.TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("the kernel did not answer kernel_info in time") from None

    async def execute(self, code: str, deadline: float) -> str:
        """Run `code`; return its stdout; raise RuntimeError with the kernel's error if it failed."""
        msg_id = self._send("execute_request", {"code": code, "silent": False, "store_history": True,
                                                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        reply, out, error = await self._until_done(msg_id, "execute_reply", deadline)
        if reply.get("status") != "ok":
            err = error or reply
            raise RuntimeError(f"{err.get('ename', 'error')}: {str(err.get('evalue', ''))[:200]}")
        return "".join(out)
