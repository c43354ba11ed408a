#!/usr/bin/env python3
"""int-numpy: numpy.fromfile and numpy.memmap through the mount equal the
source, using the sidecar's "numpy" type; BF16 widened as the sidecar's
decode note says; mmap(2) of tensor files works."""

import json
import mmap
import os

import numpy as np

import harness


def same(a, b):
	return a.shape == b.shape and a.dtype == b.dtype and \
		a.tobytes() == b.tobytes()


def check_file(t, src):
	base = os.path.basename(src)
	S = harness.SrcFile(src)
	with harness.Mount(t, src) as m:
		for x in S.tensors:
			f = harness.encode_name(x.name)
			p = os.path.join(m.path, f)
			with open(p + ".json", "rb") as fh:
				j = json.loads(fh.read().decode("utf-8"))
			label = "%s: %s" % (base, x.name[:60])
			raw = S.read(x)
			if j["numpy"] is None:
				if x.dtype == "BF16" and x.numel:
					u = np.fromfile(p, dtype="<u2")
					w = (u.astype("<u4") << 16).view("<f4")
					s = (np.frombuffer(raw, "<u2").astype("<u4")
					     << 16).view("<f4")
					t.check(same(w, s), "%s: BF16 widened" % label)
				continue
			dt = np.dtype(j["numpy"])
			shape = tuple(j["shape"])
			if x.numel == 0:
				# [0, 2^64-1] is a valid shape numpy cannot hold
				got = np.fromfile(p, dtype=dt)
				t.check(got.size == 0, "%s: np.fromfile of a "
					"zero-size tensor is empty" % label)
				continue
			want = np.frombuffer(raw, dtype=dt).reshape(shape)
			got = np.fromfile(p, dtype=dt).reshape(shape)
			t.check(same(got, want), "%s: np.fromfile" % label)
			if x.nbytes == 0:
				continue	# numpy cannot mmap an empty file
			mm = np.memmap(p, dtype=dt, mode="r", shape=shape)
			t.check(same(np.array(mm), want), "%s: np.memmap" % label)
			# the source memmapped at the sidecar's offset agrees
			sm = np.memmap(src, dtype=dt, mode="r", offset=j["offset"],
				       shape=shape)
			t.check(same(np.array(mm), np.array(sm)),
				"%s: memmap of the source at offset" % label)
			del mm, sm
			# numpy cannot open it for writing
			try:
				np.memmap(p, dtype=dt, mode="r+", shape=shape)
				t.check(False, "%s: memmap r+ refused" % label)
			except OSError:
				t.check(True, "")
			# raw mmap(2), random access
			with open(p, "rb") as fh:
				mv = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
				n = len(mv)
				ok = n == x.nbytes and mv[n // 2:] == raw[n // 2:] \
					and mv[:7] == raw[:7] and mv[:] == raw
				mv.close()
			t.check(ok, "%s: mmap(2) contents" % label)
		# the sample as a model: embeddings through the mount
		if base == "sample.safetensors":
			wte = np.fromfile(os.path.join(m.path, "wte.weight"),
					  dtype="<f2").reshape(128, 64)
			t.check(bool(np.all(np.abs(wte) <= 0.1)),
				"sample wte values are in range")
			ids = np.fromfile(os.path.join(m.path, "position_ids"), "<i8")
			t.eq(ids.tolist(), list(range(32)), "sample position_ids")
			mask = np.fromfile(os.path.join(m.path, "attn_mask"), "|b1")
			t.check(bool(np.array_equal(mask.reshape(32, 32),
						    np.tril(np.ones((32, 32), bool)))),
				"sample attn_mask is lower triangular")


def run(t):
	d = harness.tmpdir("numpy")
	files = harness.real_files() + [harness.SAMPLE]
	files += [harness.gen_file(k, d) for k in ("alldtypes", "edge")]
	for src in files:
		check_file(t, src)


harness.main("int-numpy", run)
