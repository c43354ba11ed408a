#!/usr/bin/env python3
"""int-html: .html/index.html, the model as a page (issue 37), opened in a
real browser: Debian's Chromium, headless, driven from node by
puppeteer-core (npm ci into the build directory from the committed lock
file; no browser is downloaded), as a file:// page of the mount and served
by `python3 -m http.server -d MNT` on 127.0.0.1.

- a sharded model with names a URL must escape: no console error, no page
  error, no failed request, no broken image; every image in view decoded
  (its natural size the picture's), every statistics cell in view filled;
  the numbers of the page's data are the table's; a screenshot of each
  page is kept in the build's meson-logs;
- .html/: index.html's size at stat is what a read returns; s/ lists
  nothing and s/INDEX.js is "stfs_stats(INDEX," + .stats/'s file + ");";
- laziness: a model of many tensors opens reading no weight (the
  daemon's read bytes, /proc/PID/io), and after one module is opened,
  only what is in view is drawn: well under the model's bytes."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np

import harness
from harness import gen

HERE = os.path.dirname(os.path.abspath(__file__))
BROWSER_SRC = os.path.join(HERE, "browser")
CHROMIUM = "/usr/bin/chromium"


def browser_dir(t):
	"""puppeteer-core installed once (npm ci, under a lock) into the build
	directory (STFS_BROWSER_DIR)."""
	import fcntl
	d = os.environ.get("STFS_BROWSER_DIR") or os.path.join(
		harness.tmpdir("browser"), "node")
	os.makedirs(d, exist_ok=True)
	with open(os.path.join(d, ".lock"), "w") as lk:
		fcntl.flock(lk, fcntl.LOCK_EX)
		mod = os.path.join(d, "node_modules", "puppeteer-core",
				   "package.json")
		for f in ("package.json", "package-lock.json", "page_check.mjs"):
			shutil.copyfile(os.path.join(BROWSER_SRC, f),
					os.path.join(d, f))
		if not os.path.exists(mod):
			if shutil.which("npm") is None:
				t.fatal("npm is missing: install nodejs and npm "
					"(scripts/test does)")
			r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"],
					   cwd=d, stdout=subprocess.PIPE,
					   stderr=subprocess.STDOUT,
					   stdin=subprocess.DEVNULL, timeout=300)
			if r.returncode != 0:
				t.fatal("npm ci in %s failed:\n%s" % (
					d, r.stdout.decode("utf-8", "replace")[-3000:]))
	return d


def artifact(name):
	d = os.environ.get("STFS_LOGDIR") or harness.tmpdir("shots")
	os.makedirs(d, exist_ok=True)
	return os.path.join(d, name)


def page_check(t, bdir, url, shot, click=False):
	args = ["node", os.path.join(bdir, "page_check.mjs"), url, shot]
	if click:
		args.append("click")
	r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			   stdin=subprocess.DEVNULL, timeout=240, cwd=bdir)
	if r.returncode != 0:
		t.fatal("page_check %s failed (%d): %s" % (
			url, r.returncode, r.stderr.decode("utf-8", "replace")[-3000:]))
	return json.loads(r.stdout.decode().splitlines()[-1])


def check_page(t, res, label, want_images=1):
	t.eq(res["console"], [], label + ": no console error")
	t.eq(res["pageerrors"], [], label + ": no page error")
	t.eq(res["failed"], [], label + ": no failed request")
	t.eq(res["broken"], [], label + ": no broken image")
	imgs = res["images"]
	t.check(len(imgs) >= want_images, "%s: %d images in view, want at "
		"least %d" % (label, len(imgs), want_images))
	bad = [i for i in imgs if not i["complete"] or not i["w"]]
	t.eq(bad, [], label + ": every image in view decoded")
	t.check(all(i["w"] in (640,) or i["w"] >= 600 for i in imgs),
		label + ": natural sizes are the pictures' (600 px and more)")
	t.check(res["stats"] and all(s.startswith("min ") for s in res["stats"]),
		"%s: every statistics cell in view filled: %r" % (
			label, harness.short(res["stats"])))


def make_sharded(d, rng):
	"""A sharded set: two shards and an index; names with characters a
	URL must escape."""
	T = {
		"model.embed_tokens.weight": ("BF16", [64, 48]),
		"model.layers.0.mlp.up_proj.weight": ("F32", [96, 48]),
		"model.layers.0.mlp.down_proj.weight": ("F32", [48, 96]),
		"model.layers.1.mlp.up_proj.weight": ("F16", [96, 48]),
		"model.layers.1.odd name#%?&.weight": ("F32", [10, 20]),
		"model.norm.weight": ("F32", [48]),
		"lm_head.weight": ("BF16", [64, 48]),
	}
	data = {}
	for k, (dt, shape) in T.items():
		a = rng.standard_normal(shape).astype("<f4")
		if dt == "BF16":
			a = (a.view("<u4") >> 16).astype("<u2")
		elif dt == "F16":
			a = a.astype("<f2")
			a[3, 3] = np.nan
		data[k] = a
	names = sorted(T)
	shards = [names[:4], names[4:]]
	wm = {}
	for j, part in enumerate(shards):
		fn = "model-%05d-of-%05d.safetensors" % (j + 1, len(shards))
		gen.write_safetensors(os.path.join(d, fn),
				      [(k, T[k][0], T[k][1], data[k]) for k in part])
		for k in part:
			wm[k] = fn
	with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
		json.dump({"metadata": {}, "weight_map": wm}, f)
	return T


def check_files(t, mnt, n):
	p = os.path.join(mnt, ".html", "index.html")
	st = os.stat(p)
	with open(p, "rb") as f:
		page = f.read()
	t.eq(len(page), st.st_size, ".html/index.html: stat's size is the file's")
	t.check(page.startswith(b"<!DOCTYPE html>"), "index.html is HTML")
	t.eq(sorted(os.listdir(os.path.join(mnt, ".html"))), ["index.html", "s"],
	     ".html/ lists index.html and s/")
	t.eq(os.listdir(os.path.join(mnt, ".html", "s")), [],
	     ".html/s/ lists nothing")
	# the data: the table's names, dtypes, shapes
	i = page.index(b"const D = ")
	j = page.index(b"};\n</script>", i)
	D = json.loads(page[i + len(b"const D = "):j + 1])
	t.eq(len(D["t"]), n, "the page's data: one row per tensor")
	for k, row in enumerate(D["t"]):
		with open(os.path.join(mnt, ".stats",
				       harness.encode_name(row[0]) + ".json"),
			  "rb") as f:
			stats = f.read()
		js = os.path.join(mnt, ".html", "s", "%d.js" % k)
		with open(js, "rb") as f:
			got = f.read()
		t.eq(got, b"stfs_stats(%d," % k + stats + b");\n",
		     "s/%d.js: the .stats/ file of %s" % (k, row[0]))
		t.eq(os.stat(js).st_size, len(got), "s/%d.js: its size" % k)
	t.check(not os.path.exists(os.path.join(mnt, ".html", "s",
						"%d.js" % n)),
		"no s/N.js past the last tensor")
	return D


def free_port():
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	p = s.getsockname()[1]
	s.close()
	return p


def served(t, mnt):
	"""python3 -m http.server -d MNT on 127.0.0.1: (process, port)."""
	port = free_port()
	p = subprocess.Popen([sys.executable, "-m", "http.server", "-d", mnt,
			      "--bind", "127.0.0.1", str(port)],
			     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
			     stdin=subprocess.DEVNULL)
	deadline = time.monotonic() + 20
	while time.monotonic() < deadline:
		try:
			socket.create_connection(("127.0.0.1", port), 1).close()
			return p, port
		except OSError:
			time.sleep(0.1)
	p.kill()
	t.fatal("python3 -m http.server did not start")


def read_bytes(pid):
	with open("/proc/%d/io" % pid) as f:
		for line in f:
			if line.startswith("rchar:"):
				return int(line.split()[1])
	return 0


def check_lazy(t, bdir, d, rng):
	"""Many tensors: opening the page reads no weight; opening a module
	draws what is in view, not the module."""
	n, shape = 400, [128, 256]
	tensors = [("big.w%03d" % i, "F32", shape,
		    rng.standard_normal(shape).astype("<f4")) for i in range(n)]
	p = os.path.join(d, "many.safetensors")
	gen.write_safetensors(p, tensors)
	total = n * 128 * 256 * 4
	with harness.Mount(t, p) as m:
		pid = m.pid or m.proc.pid
		before = read_bytes(pid)
		res = page_check(t, bdir, "file://" + os.path.join(
			m.path, ".html", "index.html"), artifact("int-html-many.png"))
		opened = read_bytes(pid) - before
		t.eq(res["console"] + res["failed"], [], "many: no error")
		t.check(opened < total // 100, "many: the page opens reading "
			"%d bytes, under 1%% of the model's %d" % (opened, total))
		before = read_bytes(pid)
		res = page_check(t, bdir, "file://" + os.path.join(
			m.path, ".html", "index.html"),
			artifact("int-html-many-open.png"), click=True)
		drawn = read_bytes(pid) - before
		t.check(res.get("clicked"), "many: a module to open")
		check_page(t, res, "many, a module opened")
		t.check(drawn < total // 4, "many: one module opened draws what is "
			"in view: %d bytes of the model's %d" % (drawn, total))


def main(t):
	if not os.path.exists(CHROMIUM):
		t.fatal("%s is missing: install chromium (scripts/test does)"
			% CHROMIUM)
	bdir = browser_dir(t)
	d = harness.tmpdir("html")
	rng = np.random.default_rng(37)
	src = os.path.join(d, "sharded")
	os.makedirs(src)
	T = make_sharded(src, rng)
	index = os.path.join(src, "model.safetensors.index.json")
	with harness.Mount(t, index) as m:
		check_files(t, m.path, len(T))
		res = page_check(t, bdir, "file://" + os.path.join(
			m.path, ".html", "index.html"), artifact("int-html-file.png"))
		check_page(t, res, "file://", want_images=4)
		srv, port = served(t, m.path)
		try:
			res = page_check(t, bdir, "http://127.0.0.1:%d/.html/"
					 "index.html" % port,
					 artifact("int-html-http.png"))
			check_page(t, res, "http.server", want_images=4)
		finally:
			srv.kill()
			srv.wait(10)
	with harness.Mount(t, index, args=["-o", "tree"]) as m:
		res = page_check(t, bdir, "file://" + os.path.join(
			m.path, ".html", "index.html"), artifact("int-html-tree.png"))
		check_page(t, res, "-o tree", want_images=4)
	check_lazy(t, bdir, d, rng)


if __name__ == "__main__":
	harness.main("int-html", main)
