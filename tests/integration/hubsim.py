"""hubsim.py - a Hugging Face Hub look-alike for the hf:// tests.

Two HTTP servers on 127.0.0.1 (Python's http.server, one thread per
connection, HTTP/1.1 keep-alive):

  hub   GET  /api/models/{org}/{name}/revision/{rev}      JSON sha, siblings
             (?blobs=true: each with its size, blobId and, for an LFS
             file, lfs {sha256, size, pointerSize}, as the Hub answers)
        GET  /api/models/{org}/{name}/tree/{rev}[/{path}]?recursive=true
        HEAD|GET /{org}/{name}/resolve/{rev}/{file}
        HEAD|GET /{org}/{name}/raw/{rev}/{file} (what git holds: an LFS
             file's pointer; huggingface.js asks it whether a file exists)
             LFS files (size > small): 302 to the CDN with a signed query
             that expires after `ttl` seconds, X-Repo-Commit,
             X-Linked-Etag, X-Linked-Size; small files: 200 (ranges too)
  cdn   HEAD|GET /blobs/{sha256}?valid_until=T&sig=S (ranges; 403 once
        expired; the parameter is not one stfs reads an expiry from, so
        that the tests see the CDN refuse an expired URL)

The API and resolve/ want "Authorization: Bearer TOKEN" when the repo is
private (every repo by default), and answer errors the way the Hub does:
401 without (or with a wrong) token, 403 for a gated repo, 404 with
X-Error-Code RepoNotFound / RevisionNotFound / EntryNotFound and an
X-Error-Message, which is what huggingface_hub's hf_raise_for_status reads.

Every request is logged (server, method, path, query, Authorization seen,
Range, status, body bytes sent, start and end times) so that tests can
count resolves per file and bytes per mount, look for tokens at the CDN
and measure overlap.  `delay` holds
resolve and revision answers a little so that overlapping requests
overlap for sure (the tests count overlap, they never time anything);
`cdn_delay` holds CDN answers (with `delay`: a round trip added to every
request, for the benchmarks); hang() holds resolve/ answers until
release() (a hung Hub API).  A file's content is bytes, or a FileData
read from disk when it is too large to hold (a benchmark's sparse shards).

Also: make_cache() writes a local hub cache (models--ORG--NAME/{blobs,
snapshots/SHA,refs/REV}) of a repo, as huggingface_hub lays it out.
"""

import hashlib
import hmac
import http.server
import json
import os
import re
import socketserver
import threading
import time
import urllib.parse


HANG_MAX = 20.0		# the longest hang() holds a request, s


class FileData:
	"""A file's content served from disk (a repo too large to hold in
	memory: scripts/bench-scale's shards are sparse files of GBs).  It
	stands where a file's bytes go in Repo.commit(): len() and slices read
	the file.  Hashing GBs of holes is no use to anyone, so the digests the
	Hub would send (sha256 for LFS, git blob sha) are the caller's: any
	hex strings that identify the content."""

	def __init__(self, path, sha256, git_sha):
		self.path = path
		self.size = os.path.getsize(path)
		self.sha256 = sha256
		self.git_sha = git_sha

	def __len__(self):
		return self.size

	def __getitem__(self, s):
		a, b, _ = s.indices(self.size)
		with open(self.path, "rb") as f:
			return os.pread(f.fileno(), max(0, b - a), a)


def git_blob_sha(data):
	if isinstance(data, FileData):
		return data.git_sha
	return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256_hex(data):
	if isinstance(data, FileData):
		return data.sha256
	return hashlib.sha256(data).hexdigest()


class Repo:
	"""A model repo: commits (sha -> {path: bytes}) and refs (name -> sha)."""

	def __init__(self, repo_id, gated=False, public=False):
		self.id = repo_id
		self.commits = {}
		self.refs = {}
		self.gated = gated
		self.public = public

	def commit(self, files, refs=("main",), parent=None):
		"""Add a commit holding files (path -> bytes) on top of parent's
		files (a sha or None); point refs at it; return its sha."""
		tree = dict(self.commits[parent]) if parent else {}
		tree.update(files)
		h = hashlib.sha1()
		for p in sorted(tree):
			h.update(p.encode() + b"\0" + bytes.fromhex(sha256_hex(tree[p])))
		h.update(str(len(self.commits)).encode())
		sha = h.hexdigest()
		self.commits[sha] = tree
		for r in refs:
			self.refs[r] = sha
		return sha

	def rev_sha(self, rev):
		if rev in self.refs:
			return self.refs[rev]
		if re.fullmatch(r"[0-9a-f]{40}", rev) and rev in self.commits:
			return rev
		return None


class Log:
	def __init__(self):
		self.lock = threading.Condition()
		self.entries = []
		self.inflight = {"hub": 0, "cdn": 0}
		self.max_inflight = {"hub": 0, "cdn": 0}

	def begin(self, server):
		with self.lock:
			self.inflight[server] += 1
			self.max_inflight[server] = max(self.max_inflight[server],
							self.inflight[server])

	def end(self, server, entry):
		with self.lock:
			self.inflight[server] -= 1
			self.entries.append(entry)
			self.lock.notify_all()

	def wait_idle(self, timeout):
		"""Wait (at most timeout s) until no request is in progress: an
		answer is logged after its last byte is sent, so a client can
		have every byte before its request is in the log."""
		end = time.monotonic() + timeout
		with self.lock:
			while any(self.inflight.values()):
				left = end - time.monotonic()
				if left <= 0:
					return False
				self.lock.wait(left)
			return True

	def clear(self):
		"""Forget what was logged, once the requests in progress have
		ended (5 s at most), so that none lands after the clear."""
		self.wait_idle(5.0)
		with self.lock:
			self.entries = []
			self.max_inflight = {"hub": 0, "cdn": 0}

	def snapshot(self):
		with self.lock:
			return list(self.entries)


def overlap(entries):
	"""The largest number of the given requests in progress at once."""
	ev = []
	for e in entries:
		ev.append((e["t0"], 1))
		ev.append((e["t1"], -1))
	ev.sort(key=lambda x: (x[0], x[1]))
	cur = best = 0
	for _, d in ev:
		cur += d
		best = max(best, cur)
	return best


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
	allow_reuse_address = True
	request_queue_size = 1024	# a client opening hundreds of files at once


class HubSim:
	def __init__(self, tokens=("hf_test_token",), ttl=30.0, small=4096,
		     delay=0.0, cdn_delay=0.0):
		self.repos = {}
		self.tokens = set(tokens)
		self.ttl = ttl			# lifetime of a signed CDN URL, s
		self.small = small		# files up to this size: 200 direct
		self.delay = delay		# hold resolve/revision answers, s
		self.cdn_delay = cdn_delay	# hold CDN answers, s
		self.hung = False		# hold resolve/ until release()
		self.released = threading.Event()
		self.secret = os.urandom(16)
		self.log = Log()
		self.blobs = {}			# sha256 hex -> bytes
		self.servers = []
		self.threads = []
		self.hub_port = self.cdn_port = None

	# ---- content ---------------------------------------------------------

	def add_repo(self, repo_id, **kw):
		r = Repo(repo_id, **kw)
		self.repos[repo_id] = r
		return r

	def _blob(self, data):
		k = sha256_hex(data)
		self.blobs[k] = data
		return k

	@property
	def endpoint(self):
		return "http://127.0.0.1:%d" % self.hub_port

	# ---- lifecycle ---------------------------------------------------------

	def start(self):
		sim = self

		class Hub(_Handler):
			server_name_ = "hub"
			s = sim

		class Cdn(_Handler):
			server_name_ = "cdn"
			s = sim

		for cls in (Hub, Cdn):
			srv = _Server(("127.0.0.1", 0), cls)
			srv.timeout = 1.0
			th = threading.Thread(target=srv.serve_forever,
					      kwargs={"poll_interval": 0.1},
					      daemon=True)
			th.start()
			self.servers.append(srv)
			self.threads.append(th)
		self.hub_port = self.servers[0].server_address[1]
		self.cdn_port = self.servers[1].server_address[1]
		return self

	def stop(self):
		for srv in self.servers:
			srv.shutdown()
			srv.server_close()
		for th in self.threads:
			th.join(timeout=5)
		self.servers = []
		self.threads = []

	def __enter__(self):
		return self.start()

	def __exit__(self, *a):
		self.stop()

	# ---- signing -------------------------------------------------------------

	def user_env(self, hf_home, token):
		"""The environment of a front end reading this Hub with token:
		no HF_*, HUGGING*, STFS_HTTP_* from outside, HF_HOME of its
		own."""
		e = {k: v for k, v in os.environ.items()
		     if not k.startswith(("HF_", "HUGGING", "STFS_HTTP_"))}
		e.update(HF_HOME=hf_home, HF_ENDPOINT=self.endpoint,
			 HF_TOKEN=token)
		return e

	def sign(self, key, expires):
		msg = ("%s:%s" % (key, expires)).encode()
		return hmac.new(self.secret, msg, hashlib.sha256).hexdigest()[:32]

	def cdn_url(self, key):
		exp = "%.3f" % (time.time() + self.ttl)
		return "http://127.0.0.1:%d/blobs/%s?valid_until=%s&sig=%s" % (
			self.cdn_port, key, exp, self.sign(key, exp))

	def hang(self):
		"""From now on resolve/ answers nothing until release() (or
		HANG_MAX seconds): a Hub API that hangs."""
		self.released.clear()
		self.hung = True

	def release(self):
		self.hung = False
		self.released.set()

	# ---- queries for tests -----------------------------------------------

	def requests(self, server=None, kind=None):
		"""The logged requests, once those in progress have ended (5 s
		at most: a hung request stays out)."""
		self.log.wait_idle(5.0)
		return [e for e in self.log.snapshot()
			if (server is None or e["server"] == server) and
			(kind is None or e["kind"] == kind)]

	def resolves_per_file(self):
		n = {}
		for e in self.requests("hub", "resolve"):
			n[e["file"]] = n.get(e["file"], 0) + 1
		return n


# ---- the request handler --------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"
	server_name_ = "?"
	s = None

	def log_message(self, fmt, *args):
		pass

	def do_GET(self):
		self._serve(head=False)

	def do_HEAD(self):
		self._serve(head=True)

	def _serve(self, head):
		sim = self.s
		sim.log.begin(self.server_name_)
		u = urllib.parse.urlsplit(self.path)
		self.entry = {
			"server": self.server_name_, "method": self.command,
			"path": urllib.parse.unquote(u.path), "query": u.query,
			"auth": self.headers.get("Authorization"),
			"range": self.headers.get("Range"),
			"kind": "other", "file": None, "status": None,
			"bytes": 0, "t0": time.monotonic(),
		}
		try:
			if self.server_name_ == "hub":
				self._hub(u, head)
			else:
				self._cdn(u, head)
		except (BrokenPipeError, ConnectionResetError):
			pass
		finally:
			self.entry["t1"] = time.monotonic()
			sim.log.end(self.server_name_, self.entry)

	# ---- answers ----------------------------------------------------------

	def _send(self, status, body=b"", headers=(), head=False,
		  ctype="application/json"):
		self.entry["status"] = status
		self.send_response(status)
		hdrs = dict(headers)
		if body is not None:
			hdrs.setdefault("Content-Type", ctype)
			hdrs["Content-Length"] = str(len(body))
		for k, v in hdrs.items():
			self.send_header(k, v)
		self.end_headers()
		if body and not head:
			if isinstance(body, FileData):
				for a in range(0, len(body), 1 << 20):
					self.wfile.write(body[a:a + (1 << 20)])
					self.entry["bytes"] += min(1 << 20,
								   len(body) - a)
			else:
				self.wfile.write(body)
				self.entry["bytes"] = len(body)

	def _error(self, status, code, message, head=False):
		hdrs = {"X-Error-Message": message}
		if code:
			hdrs["X-Error-Code"] = code
		body = json.dumps({"error": message}).encode()
		self._send(status, body, hdrs, head=head)

	def _ranged(self, data, hdrs, head):
		"""200 or 206 with the bytes of data a Range header asks for."""
		rng = self.headers.get("Range")
		hdrs = dict(hdrs)
		hdrs["Accept-Ranges"] = "bytes"
		if rng:
			m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng.strip())
			if not m:
				return self._send(416, b"", hdrs, head)
			a = int(m.group(1))
			b = int(m.group(2)) if m.group(2) else len(data) - 1
			b = min(b, len(data) - 1)
			if a >= len(data):
				hdrs["Content-Range"] = "bytes */%d" % len(data)
				return self._send(416, b"", hdrs, head)
			if_range = self.headers.get("If-Range")
			if not if_range or if_range == hdrs.get("ETag"):
				hdrs["Content-Range"] = "bytes %d-%d/%d" % (
					a, b, len(data))
				return self._send(206, data[a:b + 1], hdrs, head,
						  "application/octet-stream")
		return self._send(200, data, hdrs, head, "application/octet-stream")

	# ---- the hub ------------------------------------------------------------

	def _auth(self, repo, head):
		"""None when the request may see repo, else the error sent."""
		a = self.headers.get("Authorization")
		tok = a[7:] if a and a.startswith("Bearer ") else None
		if tok is not None and tok not in self.s.tokens:
			return self._error(401, None, "Invalid credentials in "
					   "Authorization header", head)
		if repo is None:
			if tok is None:
				# the Hub does not tell a missing repo from a
				# private one to anonymous callers
				return self._error(401, "RepoNotFound",
						   "Repository not found", head)
			return self._error(404, "RepoNotFound",
					   "Repository not found", head)
		if repo.public:
			return None
		if tok is None:
			if repo.gated:
				return self._error(401, "GatedRepo", "Access to "
						   "model %s is restricted. You "
						   "must have access to it and be "
						   "authenticated to access it. "
						   "Please log in." % repo.id,
						   head)
			return self._error(401, "RepoNotFound",
					   "Repository not found", head)
		if repo.gated:
			return self._error(403, "GatedRepo", "Access to model %s "
					   "is restricted and you are not in "
					   "the authorized list." % repo.id, head)
		return None

	def _hub(self, u, head):
		sim = self.s
		path = u.path
		q = urllib.parse.parse_qs(u.query)
		m = re.fullmatch(r"/api/models/([^/]+)/([^/]+)/(revision|tree)/"
				 r"([^/]+)(/.*)?", path)
		if m:
			repo_id = m.group(1) + "/" + m.group(2)
			rev = urllib.parse.unquote(m.group(4))
			sub = urllib.parse.unquote((m.group(5) or "").strip("/"))
			self.entry["kind"] = m.group(3)
			self.entry["file"] = sub
			if sim.delay:
				time.sleep(sim.delay)
			repo = sim.repos.get(repo_id)
			if self._auth(repo, head) is not None or not repo:
				return
			sha = repo.rev_sha(rev)
			if sha is None:
				return self._error(404, "RevisionNotFound",
						   "Invalid rev id: %s" % rev, head)
			tree = repo.commits[sha]
			if m.group(3) == "revision":
				return self._revision(repo, sha, tree, q, head)
			return self._tree(sub, tree, q, head)
		m = re.fullmatch(r"/([^/]+)/([^/]+)/(resolve|raw)/([^/]+)/(.+)",
				 path)
		if m:
			repo_id = m.group(1) + "/" + m.group(2)
			rev = urllib.parse.unquote(m.group(4))
			fname = urllib.parse.unquote(m.group(5))
			self.entry["kind"] = m.group(3)
			self.entry["file"] = fname
			if sim.delay:
				time.sleep(sim.delay)
			if sim.hung:
				self.entry["hung"] = True
				sim.released.wait(HANG_MAX)
			repo = sim.repos.get(repo_id)
			if self._auth(repo, head) is not None or not repo:
				return
			sha = repo.rev_sha(rev)
			if sha is None:
				return self._error(404, "RevisionNotFound",
						   "Invalid rev id: %s" % rev, head)
			data = repo.commits[sha].get(fname)
			if data is None:
				return self._error(404, "EntryNotFound",
						   "Entry not found", head)
			hdrs = {"X-Repo-Commit": sha}
			if m.group(3) == "raw" and len(data) > sim.small:
				# what git holds for an LFS file: its pointer
				data = ("version https://git-lfs.github.com/spec/v1\n"
					"oid sha256:%s\nsize %d\n" % (
						sha256_hex(data), len(data))).encode()
			if len(data) <= sim.small or m.group(3) == "raw":
				hdrs["ETag"] = '"%s"' % git_blob_sha(data)
				return self._ranged(data, hdrs, head)
			key = sim._blob(data)
			hdrs["X-Linked-Etag"] = '"%s"' % key
			hdrs["X-Linked-Size"] = str(len(data))
			hdrs["ETag"] = '"%s"' % git_blob_sha(data)
			hdrs["Location"] = sim.cdn_url(key)
			return self._send(302, b"", hdrs, head)
		self._error(404, None, "Not Found", head)

	def _revision(self, repo, sha, tree, q, head):
		blobs = q.get("blobs", ["false"])[0].lower() in ("1", "true")
		sib = []
		for p in sorted(tree):
			d = {"rfilename": p}
			if blobs:
				d["size"] = len(tree[p])
				d["blobId"] = git_blob_sha(tree[p])
				if len(tree[p]) > self.s.small:
					d["lfs"] = {"sha256": sha256_hex(tree[p]),
						    "size": len(tree[p]),
						    "pointerSize": 134}
			sib.append(d)
		body = json.dumps({"_id": "x", "id": repo.id, "modelId": repo.id,
				   "sha": sha, "private": not repo.public,
				   "gated": bool(repo.gated),
				   "siblings": sib}).encode()
		self._send(200, body, head=head)

	def _tree(self, sub, tree, q, head):
		recursive = q.get("recursive", ["false"])[0].lower() in ("1", "true")
		pre = sub + "/" if sub else ""
		if sub and sub in tree:
			return self._error(404, "EntryNotFound", "Not a directory",
					   head)
		if sub and not any(p.startswith(pre) for p in tree):
			return self._error(404, "EntryNotFound", "Entry not found",
					   head)
		out, dirs = [], set()
		for p in sorted(tree):
			if not p.startswith(pre):
				continue
			rest = p[len(pre):]
			parts = rest.split("/")
			for i in range(1, len(parts)):
				if not recursive and i > 1:
					break
				dirs.add(pre + "/".join(parts[:i]))
			if not recursive and len(parts) > 1:
				continue
			data = tree[p]
			e = {"type": "file", "oid": git_blob_sha(data),
			     "size": len(data), "path": p}
			if len(data) > self.s.small:
				e["lfs"] = {"oid": sha256_hex(data),
					    "size": len(data),
					    "pointerSize": 134}
			out.append(e)
		out += [{"type": "directory", "oid": "0" * 40, "size": 0,
			 "path": d} for d in sorted(dirs)]
		self._send(200, json.dumps(out).encode(), head=head)

	# ---- the CDN ---------------------------------------------------------------

	def _cdn(self, u, head):
		sim = self.s
		m = re.fullmatch(r"/blobs/([0-9a-f]{64})", u.path)
		q = urllib.parse.parse_qs(u.query)
		self.entry["kind"] = "blob"
		if sim.cdn_delay:
			time.sleep(sim.cdn_delay)
		if not m or m.group(1) not in sim.blobs:
			return self._send(404, b"<Error>NoSuchKey</Error>", head=head,
					  ctype="application/xml")
		key = m.group(1)
		self.entry["file"] = key
		try:
			exps = q["valid_until"][0]
			exp = float(exps)
			sig = q["sig"][0]
		except (KeyError, ValueError, IndexError):
			return self._send(403, b"<Error>MissingKey</Error>",
					  head=head, ctype="application/xml")
		if not hmac.compare_digest(sig, sim.sign(key, exps)):
			return self._send(403, b"<Error>AccessDenied</Error>",
					  head=head, ctype="application/xml")
		if time.time() > exp:
			self.entry["kind"] = "expired"
			return self._send(403, b"<Error>Request has expired"
					  b"</Error>", head=head,
					  ctype="application/xml")
		data = sim.blobs[key]
		self._ranged(data, {"ETag": '"%s"' % key}, head)


# ---- a local hub cache ---------------------------------------------------

def make_cache(cache_dir, repo, sha, refs=("main",), only=None):
	"""Lay out repo's commit sha under cache_dir (HF_HUB_CACHE) the way
	huggingface_hub does: blobs/ named by ETag (sha256 for LFS files, the
	git blob sha otherwise), snapshots/SHA/PATH as relative symlinks,
	refs/REF holding the sha.  only: the paths to include (default all).
	Returns the snapshot directory."""
	org, name = repo.id.split("/")
	root = os.path.join(cache_dir, "models--%s--%s" % (org, name))
	tree = repo.commits[sha]
	for p in sorted(tree):
		if only is not None and p not in only:
			continue
		data = tree[p]
		key = sha256_hex(data) if len(data) > 4096 else git_blob_sha(data)
		blob = os.path.join(root, "blobs", key)
		os.makedirs(os.path.dirname(blob), exist_ok=True)
		if isinstance(data, FileData):
			if not os.path.exists(blob):
				os.link(data.path, blob)	# GBs of holes: no copy
		else:
			with open(blob, "wb") as f:
				f.write(data)
		link = os.path.join(root, "snapshots", sha, p)
		os.makedirs(os.path.dirname(link), exist_ok=True)
		if not os.path.lexists(link):
			os.symlink(os.path.relpath(blob, os.path.dirname(link)), link)
	os.makedirs(os.path.join(root, "refs"), exist_ok=True)
	for r in refs:
		with open(os.path.join(root, "refs", r), "w") as f:
			f.write(sha)
	return os.path.join(root, "snapshots", sha)
