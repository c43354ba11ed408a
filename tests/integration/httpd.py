"""httpd.py - a scriptable look-alike HTTP(S) server on 127.0.0.1 for the
remote trust tests (tests/integration/test_trust.py).

    srv = httpd.Server(root_dir)            # or tls=(cert, key)
    srv.start(); url = srv.url("m.safetensors"); ...; srv.stop()

Serves files of root_dir with single ranges (206, Content-Range, a strong
ETag from size and mtime, If-Match -> 412) and logs every request in
srv.log as a dict (path, query, range, if_match, headers, status, bytes).
Paths:
  /NAME                  the file
  /redir/NAME            302 to srv.redirect_base + "NAME?X-Amz-Date=..."
                         (a presigned-looking URL valid for an hour)
  /signed/NAME?...       the file; answers 403 while srv.refuse > 0
                         (decremented), as a CDN does for an expired URL
  /badtotal/NAME         206 with a Content-Range total 1000 bytes short
Knobs: srv.hang (requests wait, never answered, until it is cleared or
60 s pass; srv.waiting counts those waiting now), srv.stop()/srv.start()
keep the port (a restart); srv.rate (bytes per second each connection may
receive, kept across the keep-alive requests of the connection, as a CDN
edge caps it; 0: no cap), srv.latency (seconds every answer waits
before its headers) and srv.delays (path -> seconds the answers for that
path wait on top, at most 5).
Faults of a server that misbehaves (issue 29).  "Data answers" are those
to any request but the open request (bytes=0-65535):
  srv.etag          the ETag of every answer (default: from size and mtime)
  srv.validators    False: no ETag and no Last-Modified at all
  srv.data_from     a directory: data answers serve the file of the same
                    name there instead (other bytes), ignoring If-Match,
                    with the ETag srv.data_etag (None: no ETag and no
                    Last-Modified)
  srv.truncate      N > 0: a data answer's body stops after N bytes and
                    the connection is closed (Content-Length says more)
  srv.endless       data answers are 206, chunked: the bytes asked for,
                    then more that never end (until the client leaves,
                    or 60 s)
  srv.header_bytes  N > 0: every answer carries a header line of N bytes
Faults of issue 38:
  srv.busy          N > 0: the next N data answers are srv.busy_status
                    (503; or 429) with "Retry-After: srv.retry_after"
                    (a string, "2" by default; None: no such header)
  srv.coding        a content coding ("gzip") every data answer names in
                    Content-Encoding, its body the file's bytes unchanged
                    (so that its length is the range's)
  srv.trickle_at    a byte offset: a data answer whose range holds it
                    sends its body at srv.trickle_rate bytes per second
                    (1 by default), a piece every srv.trickle_tick
                    seconds (1 by default; a piece is at least a byte),
                    until the client leaves or 600 s pass
  srv.trickling     data answers trickling now
  srv.link          bytes per second of all connections together (a
                    slow link; 0: none), on top of srv.rate
Every request's record has "time": time.monotonic() when it was logged.
Everything is bounded: handler threads are daemons, waits time out.
"""

import email.utils
import http.server
import os
import socket
import socketserver
import ssl
import sys
import threading
import time
import urllib.parse


class _Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def log_message(self, fmt, *args):
		pass

	def _record(self, status, nbytes):
		u = urllib.parse.urlsplit(self.path)
		self.server.owner._log({
			"path": u.path, "query": u.query,
			"range": self.headers.get("Range"),
			"if_match": self.headers.get("If-Match"),
			"headers": dict(self.headers.items()),
			"status": status, "bytes": nbytes,
			"time": time.monotonic(),
		})

	def _simple(self, status, extra=()):
		self.send_response(status)
		for k, v in extra:
			self.send_header(k, v)
		self.send_header("Content-Length", "0")
		self._record(status, 0)
		self.end_headers()

	def do_GET(self):
		srv = self.server.owner
		waited = 0.0
		if srv.hang:
			with srv.lock:
				srv.waiting += 1
			while srv.hang and waited < 60:
				time.sleep(0.05)
				waited += 0.05
			with srv.lock:
				srv.waiting -= 1
		if srv.hang:
			return
		if srv.latency:
			time.sleep(min(srv.latency, 5.0))
		u = urllib.parse.urlsplit(self.path)
		path = urllib.parse.unquote(u.path)
		if srv.delays.get(path):
			time.sleep(min(srv.delays[path], 5.0))
		badtotal = False
		if path.startswith("/redir/"):
			name = path[len("/redir/"):]
			q = "X-Amz-Date=%s&X-Amz-Expires=3600&X-Amz-Signature=%s" % (
				time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
				srv.signature)
			return self._simple(302, [("Location", srv.redirect_base +
						   urllib.parse.quote(name) + "?" + q)])
		if path.startswith("/signed/"):
			with srv.lock:
				refuse = srv.refuse > 0
				if refuse:
					srv.refuse -= 1
			if refuse:
				return self._simple(403)
			path = path[len("/signed"):]
		if path.startswith("/badtotal/"):
			badtotal = True
			path = path[len("/badtotal"):]
		f = os.path.join(srv.root, path.lstrip("/"))
		rng = self.headers.get("Range")
		data_answer = rng != "bytes=0-65535"
		if data_answer and os.path.isfile(f):
			with srv.lock:
				busy = srv.busy > 0
				if busy:
					srv.busy -= 1
			if busy:
				extra = []
				if srv.retry_after is not None:
					extra.append(("Retry-After",
						      srv.retry_after))
				return self._simple(srv.busy_status, extra)
		validators = srv.validators
		try:
			st = os.stat(f)
		except OSError:
			return self._simple(404)
		size = st.st_size
		etag = srv.etag or '"%x-%x"' % (st.st_mtime_ns, size)
		im = self.headers.get("If-Match")
		if data_answer and srv.data_from:
			# another version behind the same name, and a server
			# that does not check If-Match
			f = os.path.join(srv.data_from, path.lstrip("/"))
			etag = srv.data_etag
			validators = validators and etag is not None
		elif im is not None and im != etag and im != "*":
			return self._simple(412)
		first, last = 0, size - 1
		status = 200
		if rng and rng.startswith("bytes="):
			a, _, b = rng[6:].partition("-")
			first = int(a)
			last = min(int(b), size - 1) if b else size - 1
			if first >= size:
				return self._simple(416, [("Content-Range",
							   "bytes */%d" % size)])
			status = 206
		self.send_response(status)
		if validators:
			self.send_header("ETag", etag)
			self.send_header("Last-Modified", email.utils.formatdate(
				st.st_mtime, usegmt=True))
		if srv.header_bytes:
			self.send_header("X-Padding", "p" * srv.header_bytes)
		if data_answer and srv.coding:
			self.send_header("Content-Encoding", srv.coding)
		endless = data_answer and srv.endless
		if endless:
			self.send_header("Transfer-Encoding", "chunked")
		else:
			self.send_header("Content-Length", str(last - first + 1))
		if status == 206:
			total = size - 1000 if badtotal else size
			self.send_header("Content-Range", "bytes %d-%d/%d"
					 % (first, last, total))
		# logged before the answer is complete: a client that exits on
		# the last byte must find its request in the log (as s3proxy)
		self._record(status, last - first + 1)
		self.end_headers()
		if endless:
			with open(f, "rb") as fh:
				fh.seek(first)
				return self._endless(fh.read(last - first + 1))
		cut = srv.truncate if data_answer else 0
		if data_answer and srv.trickle_at is not None and \
				first <= srv.trickle_at <= last:
			with open(f, "rb") as fh:
				fh.seek(first)
				return self._trickle(fh.read(last - first + 1))
		with open(f, "rb") as fh:
			fh.seek(first)
			left = last - first + 1
			if cut and cut < left:
				self.wfile.write(fh.read(cut))
				self.wfile.flush()
				self.close_connection = True
				return
			while left > 0:
				chunk = fh.read(min(left, 1 << 20 if not
						    (srv.rate or srv.link)
						    else 1 << 16))
				if not chunk:
					break
				self._pace(srv.rate, len(chunk))
				srv._link_pace(len(chunk))
				try:
					self.wfile.write(chunk)
				except OSError:
					break
				left -= len(chunk)

	def _trickle(self, data):
		"""data at srv.trickle_rate bytes per second, until the client
		goes away (or 600 s pass)."""
		srv = self.server.owner
		t_end = time.monotonic() + 600
		self.close_connection = True
		with srv.lock:
			srv.trickling += 1
		tick = srv.trickle_tick
		piece = max(1, int(srv.trickle_rate * tick))
		try:
			for i in range(0, len(data), piece):
				if time.monotonic() > t_end:
					return
				try:
					self.wfile.write(data[i:i + piece])
					self.wfile.flush()
				except OSError:
					return
				time.sleep(tick)
		finally:
			with srv.lock:
				srv.trickling -= 1

	def _endless(self, data):
		"""A chunked body without end: data, then 64 KiB chunks until
		the client goes away (or 60 s pass)."""
		chunk = b"%x\r\n" % 65536 + b"e" * 65536 + b"\r\n"
		t_end = time.monotonic() + 60
		self.close_connection = True
		try:
			self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
		except OSError:
			return
		while time.monotonic() < t_end:
			try:
				self.wfile.write(chunk)
			except OSError:
				return

	def _pace(self, rate, n):
		"""A token bucket per connection (this handler serves one
		connection's requests): n more bytes may leave once the
		connection's budget allows, whatever request they belong to."""
		if not rate:
			return
		now = time.monotonic()
		free = getattr(self, "_free_at", now)
		if free < now:
			free = now	# an idle connection banks nothing
		self._free_at = free + n / rate
		if free > now:
			time.sleep(min(free - now, 5.0))


class _TCPServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
	allow_reuse_address = True
	request_queue_size = 128	# stfs opens up to 64 connections at once

	def handle_error(self, request, client_address):
		# a client that hangs up on an answer it refuses is no error
		if not isinstance(sys.exc_info()[1], ConnectionError):
			super().handle_error(request, client_address)


class Server:
	def __init__(self, root, tls=None, host="127.0.0.1"):
		self.root = os.path.abspath(root)
		self.tls = tls
		self.host = host
		self.port = 0
		self.log = []
		self.lock = threading.Lock()
		self.hang = False
		self.waiting = 0
		self.refuse = 0
		self.rate = 0
		self.latency = 0.0
		self.delays = {}
		self.etag = None
		self.validators = True
		self.data_from = None
		self.data_etag = None
		self.truncate = 0
		self.endless = False
		self.header_bytes = 0
		self.busy = 0
		self.busy_status = 503
		self.retry_after = "2"
		self.coding = None
		self.trickle_at = None
		self.trickle_rate = 1
		self.trickle_tick = 1.0
		self.trickling = 0
		self.link = 0
		self._link_free = 0.0
		self.signature = "sig-" + os.urandom(8).hex()
		self.redirect_base = None
		self.httpd = None

	def _link_pace(self, n):
		"""n more bytes may leave once the link's budget allows (one
		token bucket for every connection)."""
		if not self.link:
			return
		with self.lock:
			now = time.monotonic()
			free = max(self._link_free, now)
			self._link_free = free + n / self.link
		# the bucket's turn, however far (bounded: 120 s)
		end = min(free, now + 120)
		while time.monotonic() < end:
			time.sleep(max(0.0, min(end - time.monotonic(), 1.0)))

	def _log(self, rec):
		with self.lock:
			self.log.append(rec)

	def start(self):
		self.httpd = _TCPServer(("127.0.0.1", self.port), _Handler)
		self.httpd.owner = self
		if self.tls:
			ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
			ctx.load_cert_chain(*self.tls)
			self.httpd.socket = ctx.wrap_socket(self.httpd.socket,
							    server_side=True)
		self.port = self.httpd.server_address[1]
		if self.redirect_base is None:
			self.redirect_base = self.base() + "signed/"
		self.thread = threading.Thread(target=self.httpd.serve_forever,
					       kwargs={"poll_interval": 0.1},
					       daemon=True)
		self.thread.start()
		return self

	def stop(self):
		if self.httpd:
			self.httpd.shutdown()
			self.httpd.server_close()
			self.httpd = None

	def base(self):
		return "%s://%s:%d/" % ("https" if self.tls else "http",
					self.host, self.port)

	def url(self, name):
		return self.base() + urllib.parse.quote(name)

	def mark(self):
		with self.lock:
			return len(self.log)

	def since(self, mark):
		with self.lock:
			return list(self.log[mark:])

	def __enter__(self):
		return self.start()

	def __exit__(self, *a):
		self.hang = False
		self.stop()
