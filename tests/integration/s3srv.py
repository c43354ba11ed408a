"""s3srv.py - a private S3-compatible server on 127.0.0.1 for the tests.

    srv = s3srv.S3(workdir, keys={"AKID": ("SECRET", None)},
                   public=["pub"])
    with srv:                          # starts s3rver + the verifying proxy
        c = srv.client("AKID")         # botocore client, signed, via proxy
        c.create_bucket(Bucket="b")
        c.put_object(Bucket="b", Key="k", Body=data)
        srv.endpoint                   # http://127.0.0.1:PORT (the proxy)
        srv.requests()                 # [dict] from the proxy's log

s3rver (npm) is installed on first use into $STFS_S3RVER_DIR (the build
directory's s3rver/, set by tests/integration/meson.build), with
`npm install --prefix`; later runs reuse it.  It stores objects under
workdir and listens on a free loopback port; s3proxy.py (botocore SigV4
verification, request log) listens in front of it.  Both are our children
and are always stopped; startup and every wait have deadlines.
"""

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
S3RVER_VERSION = "3.7.1"
PY = "/usr/bin/python3"


def s3rver_dir():
	return os.environ.get("STFS_S3RVER_DIR") or os.path.join(
		os.path.dirname(os.path.dirname(HERE)), "build", "s3rver")


def s3rver_bin():
	return os.path.join(s3rver_dir(), "node_modules", ".bin", "s3rver")


def available():
	"""None when the server can run, else why not."""
	if shutil.which("node") is None:
		return "node is missing (install nodejs)"
	try:
		subprocess.run([PY, "-c", "import botocore"], check=True,
			       stdout=subprocess.DEVNULL,
			       stderr=subprocess.DEVNULL, timeout=30)
	except Exception:
		return "/usr/bin/python3 lacks botocore (install python3-botocore)"
	return None


def install():
	"""npm install s3rver once into s3rver_dir(), under a lock."""
	d = s3rver_dir()
	os.makedirs(d, exist_ok=True)
	with open(os.path.join(d, ".lock"), "w") as lk:
		fcntl.flock(lk, fcntl.LOCK_EX)
		if os.path.exists(s3rver_bin()):
			return
		if shutil.which("npm") is None:
			raise RuntimeError("s3rver is not installed in %s and npm "
					   "is missing" % d)
		r = subprocess.run(["npm", "install", "--no-audit", "--no-fund",
				    "--prefix", d, "s3rver@" + S3RVER_VERSION],
				   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
				   stdin=subprocess.DEVNULL, timeout=300)
		if r.returncode != 0 or not os.path.exists(s3rver_bin()):
			raise RuntimeError("npm install s3rver failed:\n%s" %
					   r.stdout.decode("utf-8", "replace"))


def free_port():
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	p = s.getsockname()[1]
	s.close()
	return p


def wait_port(port, proc, what, timeout=30.0):
	deadline = time.monotonic() + timeout
	while time.monotonic() < deadline:
		if proc.poll() is not None:
			raise RuntimeError("%s exited with %d" % (what,
								 proc.returncode))
		try:
			socket.create_connection(("127.0.0.1", port), 0.5).close()
			return
		except OSError:
			time.sleep(0.05)
	raise RuntimeError("%s: not listening after %.0f s" % (what, timeout))


def stop_proc(p):
	if p is None or p.poll() is not None:
		return
	p.terminate()
	try:
		p.wait(timeout=5)
	except subprocess.TimeoutExpired:
		p.kill()
		p.wait()


class S3:
	def __init__(self, workdir, keys, public=(), region="us-east-1"):
		self.workdir = workdir
		self.keys = dict(keys)
		self.public = list(public)
		self.region = region
		self.s3rver = self.proxy = self.tls_proxy = None
		self.tls_port = None
		self.endpoint = None
		self.log = os.path.join(workdir, "requests.log")
		self.control = os.path.join(workdir, "control.json")

	def start(self):
		install()
		os.makedirs(os.path.join(self.workdir, "data"), exist_ok=True)
		port = free_port()
		self.s3rver_log = open(os.path.join(self.workdir, "s3rver.log"),
				       "wb")
		self.s3rver = subprocess.Popen(
			# s3rver's continuation tokens use DES, which
			# OpenSSL 3 keeps in its legacy provider
			["node", "--openssl-legacy-provider", s3rver_bin(), "-d",
			 os.path.join(self.workdir, "data"), "-a", "127.0.0.1",
			 "-p", str(port), "--silent", "--no-vhost-buckets"],
			stdin=subprocess.DEVNULL, stdout=self.s3rver_log,
			stderr=subprocess.STDOUT)
		wait_port(port, self.s3rver, "s3rver")
		self.upstream = "127.0.0.1:%d" % port	# s3rver itself
		open(self.log, "w").close()
		self.proxy, pport = self._proxy("proxy", port)
		self.endpoint = "http://127.0.0.1:%d" % pport
		return self

	def _proxy(self, name, port, tls=None):
		"""Start an s3proxy.py in front of s3rver's port: (Popen,
		port)."""
		cfg = {"upstream": "127.0.0.1:%d" % port, "log": self.log,
		       "port_file": os.path.join(self.workdir, name + ".port"),
		       "control": self.control,
		       "region": self.region,
		       "keys": {k: {"secret": v[0], "token": v[1]}
				for k, v in self.keys.items()},
		       "public_buckets": self.public}
		if tls:
			cfg["tls"] = {"cert": tls[0], "key": tls[1]}
		cfgpath = os.path.join(self.workdir, name + ".json")
		with open(cfgpath, "w") as f:
			json.dump(cfg, f)
		errlog = open(os.path.join(self.workdir, name + ".err"), "wb")
		proc = subprocess.Popen(
			[PY, os.path.join(HERE, "s3proxy.py"), cfgpath],
			stdin=subprocess.DEVNULL, stdout=errlog,
			stderr=subprocess.STDOUT)
		errlog.close()
		deadline = time.monotonic() + 30
		while not os.path.exists(cfg["port_file"]):
			if proc.poll() is not None or \
			   time.monotonic() > deadline:
				stop_proc(proc)
				raise RuntimeError("s3proxy did not start: %s" %
						   self.proxy_errors())
			time.sleep(0.05)
		with open(cfg["port_file"]) as f:
			pport = int(f.read())
		wait_port(pport, proc, "s3proxy")
		return proc, pport

	def tls_endpoint(self, cert, key):
		"""A second proxy, listening with TLS (cert, key: PEM files):
		its https:// endpoint.  Stopped with the server."""
		if self.tls_proxy is None:
			self.tls_proxy, self.tls_port = self._proxy(
				"tls-proxy", int(self.upstream.split(":")[1]),
				tls=(cert, key))
		return "https://127.0.0.1:%d" % self.tls_port

	def proxy_errors(self):
		out = ""
		for name in ("proxy.err", "tls-proxy.err"):
			try:
				with open(os.path.join(self.workdir, name),
					  "rb") as f:
					out += f.read().decode("utf-8", "replace")
			except OSError:
				pass
		return out

	def stop(self):
		stop_proc(self.tls_proxy)
		stop_proc(self.proxy)
		stop_proc(self.s3rver)
		self.proxy = self.s3rver = self.tls_proxy = None

	def __enter__(self):
		try:
			return self.start()
		except BaseException:
			self.stop()
			raise

	def __exit__(self, *a):
		self.stop()

	def client(self, akid):
		"""A botocore S3 client signing with akid's secret (and token),
		through the proxy, path-style."""
		import botocore.session
		from botocore.config import Config
		sec, tok = self.keys[akid]
		s = botocore.session.get_session()
		return s.create_client(
			"s3", region_name=self.region, endpoint_url=self.endpoint,
			aws_access_key_id=akid, aws_secret_access_key=sec,
			aws_session_token=tok,
			config=Config(s3={"addressing_style": "path"},
				      signature_version="s3v4",
				      retries={"max_attempts": 1}))

	def user_env(self, akid, home):
		"""The environment of a front end signing with akid through the
		proxy: no AWS_* or STFS_S3* from outside, HOME of its own."""
		sec, tok = self.keys[akid]
		e = {k: v for k, v in os.environ.items()
		     if not k.startswith(("AWS_", "STFS_S3"))}
		e.update(HOME=home, AWS_ENDPOINT_URL=self.endpoint,
			 AWS_REGION=self.region, AWS_ACCESS_KEY_ID=akid,
			 AWS_SECRET_ACCESS_KEY=sec)
		if tok:
			e["AWS_SESSION_TOKEN"] = tok
		return e

	def set_get_delay(self, seconds):
		"""From now on the proxy holds every GET's answer this long
		(0: none): a store that answers slowly."""
		tmp = self.control + ".tmp"
		with open(tmp, "w") as f:
			json.dump({"get_delay": seconds}, f)
		os.rename(tmp, self.control)

	def requests(self):
		with open(self.log) as f:
			return [json.loads(l) for l in f if l.strip()]

	def mark(self):
		return len(self.requests())

	def requests_since(self, mark):
		return self.requests()[mark:]
