"""s3proxy.py - a SigV4-verifying proxy in front of s3rver (tests only).

    /usr/bin/python3 s3proxy.py CONFIG.json

s3rver (the S3 look-alike the tests run) does not check signatures, so
every request goes through this proxy first.  It listens on 127.0.0.1,
recomputes the AWS Signature Version 4 of each request with botocore (an
independent implementation, not stfs's code) and answers like S3 does:

- no Authorization header: 403 AccessDenied, unless the bucket is listed
  as public-read and the request only reads (GET/HEAD);
- an unknown access key: 403 InvalidAccessKeyId;
- a signature that does not match, a missing or unsigned
  x-amz-content-sha256 / x-amz-date, a missing or wrong session token for
  keys that have one, a date more than 15 minutes off: 403
  SignatureDoesNotMatch (or AccessDenied / RequestTimeTooSkewed);
- If-Match on GET/HEAD whose ETag does not match the object's current one:
  412 PreconditionFailed (s3rver ignores If-Match; S3 does not).  The
  current ETag is asked of s3rver once (HEAD) and remembered until a
  write to that path passes through the proxy.

Verified requests are forwarded to s3rver without their credentials.
Every request is appended to the log file as one JSON line: method, path,
query, Range, If-Match, status, access key (never a secret), response
bytes.  CONFIG.json:

    {"listen_port": 0, "upstream": "127.0.0.1:PORT", "log": PATH,
     "port_file": PATH, "region": "us-east-1",
     "keys": {"AKID": {"secret": "...", "token": null}},
     "public_buckets": ["pub"]}

The chosen port is written to port_file once the proxy listens.  With
"tls": {"cert": PATH, "key": PATH} it listens with TLS (a certificate
made at test time).  With "control": PATH, every request reads that JSON
file (when it exists): {"get_delay": S} holds each GET's answer S seconds
(60 at most), a store that answers slowly.
"""

import datetime
import http.client
import http.server
import json
import socketserver
import sys
import threading
import time
import urllib.parse

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

CFG = {}
LOG_LOCK = threading.Lock()
ETAGS = {}	# path -> current ETag, for If-Match (writes pass through us)
HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
       "te", "trailers", "transfer-encoding", "upgrade"}


def s3_error(code, message):
	return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s"
		"</Code><Message>%s</Message></Error>" % (code, message)).encode()


def parse_auth(value):
	# AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request,
	#  SignedHeaders=host;x-amz-date, Signature=hex
	if not value.startswith("AWS4-HMAC-SHA256 "):
		return None
	out = {}
	for part in value[len("AWS4-HMAC-SHA256 "):].split(","):
		k, _, v = part.strip().partition("=")
		out[k] = v
	if not all(k in out for k in ("Credential", "SignedHeaders",
				      "Signature")):
		return None
	scope = out["Credential"].split("/")
	if len(scope) != 5 or scope[3] != "s3" or scope[4] != "aws4_request":
		return None
	out["akid"], out["day"], out["region"] = scope[0], scope[1], scope[2]
	out["signed"] = out["SignedHeaders"].split(";")
	return out


class Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def log_message(self, fmt, *args):
		pass

	def _log(self, status, nbytes, akid):
		u = urllib.parse.urlsplit(self.path)
		rec = {"method": self.command, "path": u.path, "query": u.query,
		       "range": self.headers.get("Range"),
		       "if_match": self.headers.get("If-Match"),
		       "status": status, "bytes": nbytes, "akid": akid}
		with LOG_LOCK:
			with open(CFG["log"], "a") as f:
				f.write(json.dumps(rec) + "\n")

	# A request is logged before the last byte of its answer leaves: a
	# client that has its whole answer (and the test that ran it) then
	# always finds it in the log.  Logged after the answer, it raced the
	# test reading the log ("requests reached the server" found none).

	def _reply(self, status, body, akid=None, headers=()):
		self.send_response(status)
		self.send_header("Content-Type", "application/xml")
		self.send_header("Content-Length", str(len(body)))
		for k, v in headers:
			self.send_header(k, v)
		self._log(status, len(body), akid)
		self.end_headers()
		if self.command != "HEAD":
			self.wfile.write(body)

	def _bucket(self):
		p = urllib.parse.urlsplit(self.path).path.lstrip("/")
		return urllib.parse.unquote(p.split("/", 1)[0])

	def _verify(self, body):
		"""None when the request may go on, else (status, code, msg)."""
		auth = self.headers.get("Authorization")
		if auth is None:
			if (self.command in ("GET", "HEAD") and
			    self._bucket() in CFG.get("public_buckets", [])):
				return None
			return (403, "AccessDenied", "Access Denied")
		a = parse_auth(auth)
		if a is None:
			return (400, "AuthorizationHeaderMalformed",
				"malformed Authorization header")
		self.akid = a["akid"]
		key = CFG["keys"].get(a["akid"])
		if key is None:
			return (403, "InvalidAccessKeyId", "The AWS Access Key Id "
				"you provided does not exist in our records.")
		for h in ("host", "x-amz-date", "x-amz-content-sha256"):
			if h not in a["signed"]:
				return (403, "SignatureDoesNotMatch",
					"%s is not signed" % h)
		if key.get("token"):
			if "x-amz-security-token" not in a["signed"]:
				return (403, "InvalidToken", "the session token "
					"is missing or not signed")
			if self.headers.get("x-amz-security-token") != key["token"]:
				return (403, "InvalidToken", "The provided token "
					"is malformed or otherwise invalid.")
		amzdate = self.headers.get("x-amz-date", "")
		try:
			when = datetime.datetime.strptime(amzdate, "%Y%m%dT%H%M%SZ")
		except ValueError:
			return (403, "SignatureDoesNotMatch", "bad x-amz-date")
		if abs((datetime.datetime.utcnow() - when).total_seconds()) > 900:
			return (403, "RequestTimeTooSkewed", "clock skew")
		if a["day"] != amzdate[:8] or a["region"] != CFG["region"]:
			return (403, "SignatureDoesNotMatch", "bad credential "
				"scope %s/%s" % (a["day"], a["region"]))
		sha = self.headers.get("x-amz-content-sha256")
		if sha != "UNSIGNED-PAYLOAD":
			import hashlib
			if hashlib.sha256(body).hexdigest() != sha:
				return (400, "XAmzContentSHA256Mismatch",
					"payload hash mismatch")
		# botocore recomputes the signature over exactly the headers
		# the client says it signed
		hdrs = {}
		for h in a["signed"]:
			v = self.headers.get_all(h)
			if v is None:
				return (403, "SignatureDoesNotMatch",
					"signed header %s is missing" % h)
			hdrs[h] = ",".join(v)
		url = "http://%s%s" % (self.headers.get("host"), self.path)
		req = AWSRequest(method=self.command, url=url, data=body,
				 headers=hdrs)
		req.context["timestamp"] = amzdate
		signer = S3SigV4Auth(Credentials(a["akid"], key["secret"],
						 key.get("token")),
				     "s3", a["region"])
		# botocore would add the token header itself; it is signed
		# only when the client sent (and signed) it, checked above
		if signer.signed_headers(signer.headers_to_sign(req)) != \
		   ";".join(sorted(a["signed"])):
			return (403, "SignatureDoesNotMatch", "signed header "
				"list differs")
		creq = signer.canonical_request(req)
		sts = signer.string_to_sign(req, creq)
		want = signer.signature(sts, req)
		if want != a["Signature"]:
			return (403, "SignatureDoesNotMatch", "The request "
				"signature we calculated does not match the "
				"signature you provided.")
		return None

	def _upstream(self):
		c = getattr(self.server.local, "conn", None)
		if c is None:
			c = http.client.HTTPConnection(CFG["upstream"], timeout=30)
			self.server.local.conn = c
		return c

	def _forward(self, method, body, headers):
		for attempt in (0, 1):
			c = self._upstream()
			try:
				c.request(method, self.path, body=body,
					  headers=headers)
				return c.getresponse()
			except (http.client.HTTPException, OSError):
				c.close()
				self.server.local.conn = None
				if attempt:
					raise

	def _slow(self):
		"""Hold a GET as the control file says (a slow store)."""
		try:
			with open(CFG["control"]) as f:
				delay = float(json.load(f).get("get_delay", 0))
		except (KeyError, OSError, ValueError):
			return
		if self.command == "GET" and delay > 0:
			time.sleep(min(delay, 60.0))

	def _handle(self):
		self.akid = None
		n = int(self.headers.get("Content-Length") or 0)
		body = self.rfile.read(n) if n else b""
		self._slow()
		bad = self._verify(body)
		if bad:
			self._reply(bad[0], s3_error(bad[1], bad[2]), self.akid)
			return
		fwd = {k: v for k, v in self.headers.items()
		       if k.lower() not in HOP and k.lower() not in
		       ("authorization", "x-amz-security-token", "if-match")}
		im = self.headers.get("If-Match")
		path = urllib.parse.urlsplit(self.path).path
		if im is not None and self.command in ("GET", "HEAD"):
			with LOG_LOCK:
				cur = ETAGS.get(path)
			if cur is None:
				r = self._forward("HEAD", None,
						  {"Host": fwd.get("Host", "")})
				r.read()
				cur = r.getheader("ETag") if r.status == 200 \
					else None
				with LOG_LOCK:
					ETAGS[path] = cur
			if cur is not None and cur != im:
				self._reply(412, s3_error("PreconditionFailed",
					"At least one of the pre-conditions you "
					"specified did not hold"), self.akid)
				return
		r = self._forward(self.command, body, fwd)
		if self.command in ("PUT", "DELETE", "POST"):
			# every write goes through here: forget the ETag
			with LOG_LOCK:
				ETAGS.pop(path, None)
		self.send_response(r.status)
		length = r.getheader("Content-Length")
		for k, v in r.getheaders():
			if k.lower() not in HOP:
				self.send_header(k, v)
		if length is None and self.command != "HEAD":
			data = r.read()
			self.send_header("Content-Length", str(len(data)))
			self._log(r.status, len(data), self.akid)
			self.end_headers()
			self.wfile.write(data)
			return
		# stream, holding back one chunk so that the log line is
		# written before the answer is complete
		pending = r.read(1 << 20)
		if not pending:
			self._log(r.status, 0, self.akid)
			self.end_headers()
			return
		self.end_headers()
		sent = 0
		while True:
			chunk = r.read(1 << 20)
			if not chunk:
				break
			self.wfile.write(pending)
			sent += len(pending)
			pending = chunk
		self._log(r.status, sent + len(pending), self.akid)
		self.wfile.write(pending)

	do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _handle


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
	allow_reuse_address = True

	def __init__(self, *a):
		super().__init__(*a)
		self.local = threading.local()

	def handle_error(self, request, client_address):
		# a client may hang up on an answer it no longer wants (a
		# daemon that unmounts ends its transfers): no error
		if not isinstance(sys.exc_info()[1], ConnectionError):
			super().handle_error(request, client_address)


def main():
	with open(sys.argv[1]) as f:
		CFG.update(json.load(f))
	srv = Server(("127.0.0.1", CFG.get("listen_port", 0)), Handler)
	if CFG.get("tls"):
		import ssl
		ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
		ctx.load_cert_chain(CFG["tls"]["cert"], CFG["tls"]["key"])
		srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
	tmp = CFG["port_file"] + ".tmp"
	with open(tmp, "w") as f:
		f.write(str(srv.server_address[1]))
	import os
	os.rename(tmp, CFG["port_file"])
	srv.serve_forever()


if __name__ == "__main__":
	main()
