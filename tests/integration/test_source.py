#!/usr/bin/env python3
"""int-source: the source changing under a mount.  stfs holds the file
open, so a deleted or renamed-over source keeps being served as it was;
a truncated source is a changed source: every read of it fails (EIO),
never returns short or zero-filled data, and no tensor reads although its
own bytes are still there (the file is no longer the one mounted)."""

import errno
import os
import shutil

import harness


def read_all(p):
	with open(p, "rb", buffering=0) as f:
		return f.read()


def run(t):
	d = harness.tmpdir("source")
	src = os.path.join(d, "sample.safetensors")
	shutil.copyfile(harness.SAMPLE, src)
	S = harness.SrcFile(src)
	want = {x.name: S.read(x) for x in S.tensors}

	# deleted, then another file renamed to its name
	with harness.Mount(t, src) as m:
		os.unlink(src)
		other = os.path.join(d, "other.safetensors")
		harness.gen.gen_alldtypes(other)
		os.rename(other, src)
		for x in S.tensors:
			p = os.path.join(m.path, harness.encode_name(x.name))
			t.check(read_all(p) == want[x.name], "replaced source: %s "
				"still reads as before" % x.name)
		t.eq(sorted(os.listdir(m.path)), sorted(
			[harness.encode_name(x.name) for x in S.tensors] +
			[harness.encode_name(x.name) + ".json" for x in S.tensors] +
			["__metadata__.json", "__summary__.json"]),
			"replaced source: same listing")

	# truncated in the middle of the data section
	shutil.copyfile(harness.SAMPLE, src)
	cut = S.data_start + S.tensors[-1].end // 2
	with harness.Mount(t, src) as m:
		with open(src, "r+b") as f:
			f.truncate(cut)
		for x in S.tensors:
			p = os.path.join(m.path, harness.encode_name(x.name))
			if x.nbytes == 0:
				continue
			try:
				data = read_all(p)
				# page cache may still hold bytes read before the
				# cut: those must be the right ones
				t.check(data == want[x.name], "truncated source: %s "
					"read %d bytes that are not the tensor's"
					% (x.name, len(data)))
			except OSError as e:
				t.eq(e.errno, errno.EIO, "truncated source: %s errno"
				     % x.name)
		# a tensor whose bytes are all there fails like every other:
		# the file is no longer the one mounted
		early = [x for x in S.tensors if x.offset + x.nbytes <= cut and
			 x.nbytes]
		p = os.path.join(m.path, harness.encode_name(early[0].name))
		try:
			read_all(p)
			t.check(False, "truncated source: %s (before the cut) "
				"still reads after the change" % early[0].name)
		except OSError as e:
			t.eq(e.errno, errno.EIO, "truncated source: errno for a "
			     "tensor before the cut")
		# a tensor entirely past the cut, never read before: must fail
		late = [x for x in S.tensors if x.offset >= cut and x.nbytes]
		if late:
			p = os.path.join(m.path, harness.encode_name(late[-1].name))
			try:
				data = read_all(p)
				t.check(False, "truncated source: reading %s (all of it "
					"past the end) returned %d bytes instead of EIO"
					% (late[-1].name, len(data)))
			except OSError as e:
				t.eq(e.errno, errno.EIO, "truncated source: errno for a "
				     "tensor past the end")


harness.main("int-source", run)
