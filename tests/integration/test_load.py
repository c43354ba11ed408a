#!/usr/bin/env python3
"""int-remote-load: a sharded model read through the mount the ways
loaders read one, from a server that caps each connection's rate and
holds every answer (httpd.py's rate and latency, as a CDN edge does).

    cold         mount, `ls -l`, stat of every file: no data request
    first        the first 4 KiB of a tensor: the rest of it is fetched
                 without a second read (a read that starts a tensor
                 starts its prefetch)
    files        every tensor file in index order (name order, which
                 jumps between the shards), byte for byte
    mmap         .safetensors/model.safetensors mmapped, tensors taken in
                 the order of its keys (as safe_open does), byte for byte
    parallel     four readers at once, one quarter of the tensors each
    caps         -o http_connections=2,max_throughput=16M: the same bytes;
                 a malformed max_throughput is refused in one line

Every byte read through a mount is compared with the shard files the
server serves.  Nothing here times anything (the figures come from
scripts/bench-load and docs/performance.md).
"""

import json
import mmap
import multiprocessing
import os
import sys
import threading
import time

import harness
import httpd
from harness import run

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen  # noqa: E402
import gen_sharded  # noqa: E402

RATE = 4 << 20		# bytes/s per connection
LATENCY = 0.01		# seconds per answer


def make_model(d):
	"""~24 MiB in 3 shards: layer weights of 0.5-2 MiB between small
	biases; in name order h.0, h.1, h.10, h.11, h.2, ... the reader jumps
	between shards and back."""
	T = []
	for i in range(12):
		n = (1 + i % 4) << 18
		T.append(("h.%d.b" % i, "F32", [64 + i],
			  (lambda i=i: gen.bulk_bytes(100 + i, (64 + i) * 4))))
		T.append(("h.%d.w" % i, "F16", [n],
			  (lambda i=i, n=n: gen.bulk_bytes(200 + i, n * 2))))
	T.append(("wte.weight", "F16", [3 << 20],
		  (lambda: gen.bulk_bytes(7, 6 << 20))))
	index, wm = gen_sharded.write_sharded(d, T, 3)
	shards = {s: harness.SrcFile(os.path.join(d, s))
		  for s in sorted(set(wm.values()))}
	return index, wm, shards


def src_bytes(wm, shards, name):
	S = shards[wm[name]]
	return S.read(S.by_name[name])


def data_requests(mnt):
	with open(os.path.join(mnt, ".stfs", "stats.json")) as f:
		st = json.load(f)
	return sum(s["requests"]["data"] for s in st["sources"]
		   if "requests" in s)


def read_files(t, mnt, wm, shards, names, label):
	for name in names:
		p = os.path.join(mnt, harness.encode_name(name))
		with open(p, "rb") as f:
			got = f.read()
		t.check(got == src_bytes(wm, shards, name),
			"%s: tensor %s: bytes differ" % (label, name))


def read_mmap(t, mnt, wm, shards, label):
	p = os.path.join(mnt, ".safetensors", "model.safetensors")
	with open(p, "rb") as f:
		n = int.from_bytes(f.read(8), "little")
		hdr = json.loads(f.read(n))
		mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
		try:
			keys = sorted(k for k in hdr if k != "__metadata__")
			t.eq(set(keys), set(wm), "%s: tensors" % label)
			for k in keys:
				b, e = hdr[k]["data_offsets"]
				got = bytes(mm[8 + n + b:8 + n + e])
				t.check(got == src_bytes(wm, shards, k),
					"%s: tensor %s: bytes differ" % (label, k))
		finally:
			mm.close()


def case_cold(t, url, wm):
	with harness.Mount(t, url) as m:
		listing = os.listdir(m.path)
		for f in listing:
			os.stat(os.path.join(m.path, f))
		os.listdir(os.path.join(m.path, ".safetensors"))
		os.stat(os.path.join(m.path, ".safetensors", "model.safetensors"))
		t.eq(len([f for f in listing if harness.decode_name(f) in wm]),
		     len(wm), "cold: one file per tensor")
		t.eq(data_requests(m.path), 0,
		     "cold: ls -l and stat make no data request")


def fetched(mnt):
	with open(os.path.join(mnt, ".stfs", "stats.json")) as f:
		st = json.load(f)
	return sum(s.get("bytes_fetched", 0) for s in st["sources"])


def case_first(t, url, wm, shards):
	name = "wte.weight"		# 6 MiB; the kernel reads ahead 512 KiB
	size = len(src_bytes(wm, shards, name))
	with harness.Mount(t, url) as m:
		base = fetched(m.path)
		fd = os.open(os.path.join(m.path, harness.encode_name(name)),
			     os.O_RDONLY)
		try:
			t.eq(os.pread(fd, 4096, 0),
			     src_bytes(wm, shards, name)[:4096],
			     "first: the first 4 KiB")
			deadline = time.monotonic() + 60
			while fetched(m.path) - base < size and \
			      time.monotonic() < deadline:
				time.sleep(0.05)
			t.check(fetched(m.path) - base >= size,
				"first: one read of %s's start fetched all of "
				"it (%d of %d bytes)" %
				(name, fetched(m.path) - base, size))
		finally:
			os.close(fd)


def case_files(t, url, wm, shards):
	with harness.Mount(t, url) as m:
		read_files(t, m.path, wm, shards, list(wm), "files")
		t.check(data_requests(m.path) > 0, "files: data requests counted")


def case_mmap(t, url, wm, shards):
	with harness.Mount(t, url) as m:
		read_mmap(t, m.path, wm, shards, "mmap")


def case_parallel(t, url, wm, shards):
	names = list(wm)
	with harness.Mount(t, url) as m:
		th = [threading.Thread(target=read_files,
				       args=(t, m.path, wm, shards, names[i::4],
					     "parallel %d" % i))
		      for i in range(4)]
		for x in th:
			x.start()
		for x in th:
			x.join(120)
		t.check(not any(x.is_alive() for x in th),
			"parallel: readers done within 120 s")


def case_caps(t, url, wm, shards, d):
	args = ["-o", "http_connections=2,max_throughput=16M"]
	with harness.Mount(t, url, args=args) as m:
		read_files(t, m.path, wm, shards, list(wm), "caps")
		read_mmap(t, m.path, wm, shards, "caps mmap")
	mnt = os.path.join(d, "refused")
	os.makedirs(mnt)
	r = run([harness.STFS, "-o", "max_throughput=fast", url, mnt],
		timeout=30)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode != 0 and "max_throughput=fast" in err and
		err.count("\n") == 1,
		"max_throughput=fast refused in one line: %r" % err)
	t.check(not harness.is_mounted(mnt), "max_throughput=fast: not mounted")
	harness.force_unmount(mnt)


def serve(www, q):
	"""The server, in a process of its own: a page fault on the mmapped
	file holds this process's GIL while the mount waits for the server."""
	srv = httpd.Server(www)
	srv.rate = RATE
	srv.latency = LATENCY
	srv.start()
	q.put(srv.base())
	time.sleep(280)		# the test's timeout; terminated before


def run_(t):
	d = harness.tmpdir("load")
	www = os.path.join(d, "www")
	index, wm, shards = make_model(www)
	q = multiprocessing.Queue()
	p = multiprocessing.Process(target=serve, args=(www, q), daemon=True)
	p.start()
	try:
		url = q.get(timeout=30) + os.path.basename(index)
		case_cold(t, url, wm)
		case_first(t, url, wm, shards)
		case_files(t, url, wm, shards)
		case_mmap(t, url, wm, shards)
		case_parallel(t, url, wm, shards)
		case_caps(t, url, wm, shards, d)
	finally:
		p.terminate()
		p.join(10)


harness.main("int-remote-load", run_)
