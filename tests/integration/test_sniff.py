#!/usr/bin/env python3
"""int-sniff: foreign files get a message that says what they are (issue 12).

Every fixture is written here: a Git LFS pointer, a zip that is no PyTorch
checkpoint (those are mounted: test_torch.py), a .npz, a .npy, an HDF5 file, a pickle, plain text, an HTML
page, a JSON config, an empty file, a download cut in the data and one cut
in the header.  stfs-inspect and stfs both refuse each with exit status 1,
keep the reference error name, and say what the file is and what to do;
nothing is mounted.  The same for a shard of an index that is an LFS
pointer.
"""

import io
import json
import os
import pickle
import struct
import zipfile

import harness
from harness import STFS, STFS_INSPECT, run

import numpy as np


def fixtures(d):
	"""{file name: (bytes, reference error name, [words in the message])}"""
	fx = {}
	lfs = (b"version https://git-lfs.github.com/spec/v1\n"
	       b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
	       b"ca24d17e2393\nsize 548105171\n")
	fx["model.safetensors"] = (lfs, "HeaderTooLarge",
				   ["Git LFS pointer", "git lfs pull", "548105171"])
	b = io.BytesIO()
	with zipfile.ZipFile(b, "w") as z:
		z.writestr("weights/readme.txt", "not a checkpoint\n")
	fx["weights.zip"] = (b.getvalue(), "HeaderTooLarge",
			     ["a zip archive", "safetensors.torch"])
	# named as PyTorch's (issue 39): its error, leading with what the
	# file is not, never safetensors' HeaderTooLarge
	fx["weights.bin"] = (b.getvalue(), "InvalidCheckpoint",
			     ["not a PyTorch checkpoint: a zip archive without "
			      "FOLDER/data.pkl", "safetensors.torch"])
	fx["random.bin"] = (bytes(range(7, 200)), "InvalidCheckpoint",
			    ["not a PyTorch checkpoint: its first 8 bytes are "
			     "07 08 09 0a 0b 0c 0d 0e"])
	fx["notes.pt"] = (b"a README saved as .pt\n", "InvalidCheckpoint",
			  ["not a PyTorch checkpoint: a text file",
			   "a README saved", "give the checkpoint itself"])
	fx["tiny.pth"] = (b"PK\x03", "InvalidCheckpoint",
			  ["not a PyTorch checkpoint: a file of 3 bytes"])
	whole = io.BytesIO()
	torch_zip = zipfile.ZipFile(whole, "w")
	torch_zip.writestr("archive/data.pkl", pickle.dumps({}, protocol=2))
	torch_zip.writestr("archive/data/0", bytes(4000))
	torch_zip.close()
	fx["cut.bin"] = (whole.getvalue()[:3000], "InvalidCheckpoint",
			 ["a damaged PyTorch checkpoint: a zip archive (what "
			  "torch.save writes) that stfs cannot read",
			  "incomplete download"])
	b = io.BytesIO()
	np.savez(b, a=np.arange(3), b=np.ones(2))
	fx["arrays.npz"] = (b.getvalue(), "HeaderTooLarge",
			    [".npz", "safetensors.numpy"])
	b = io.BytesIO()
	np.save(b, np.arange(5, dtype=np.float32))
	fx["a.npy"] = (b.getvalue(), "HeaderTooLarge", ["NumPy .npy"])
	# HDF5 superblock signature, version 0, then zeros
	fx["m.h5"] = (b"\x89HDF\r\n\x1a\n" + bytes(88), "HeaderTooLarge",
		      ["HDF5"])
	fx["old.pt"] = (pickle.dumps({"x": list(range(10))}, protocol=2),
			"InvalidCheckpoint", ["not a PyTorch checkpoint: a "
					      "Python pickle", "never unpickle"])
	fx["old.pkl"] = (pickle.dumps({"x": list(range(10))}, protocol=2),
			 "HeaderTooLarge", ["pickle", "never unpickle"])
	fx["notes.safetensors"] = (b"This model was trained on ...\nmore\n",
				   "HeaderTooLarge",
				   ["text file", "This model was trained"])
	fx["page.safetensors"] = (b"<!DOCTYPE html>\n<html><body>403 Forbidden"
				  b"</body></html>\n", "HeaderTooLarge",
				  ["HTML page", "download it again"])
	fx["config.json"] = (json.dumps({"model_type": "gpt2"}).encode(),
			     "HeaderTooLarge", ["JSON file"])
	fx["empty.safetensors"] = (b"", "HeaderTooSmall", ["empty file"])
	hdr = json.dumps({"w": {"dtype": "F32", "shape": [1000],
				"data_offsets": [0, 4000]}}).encode()
	whole = struct.pack("<Q", len(hdr)) + hdr + bytes(range(250)) * 16
	fx["cut-data.safetensors"] = (
		whole[:3000], "MetadataIncompleteBuffer",
		["3000 of %d bytes" % len(whole), "incomplete download"])
	fx["cut-header.safetensors"] = (
		whole[:40], "InvalidHeaderLength",
		["40 of at least %d bytes" % (8 + len(hdr)), "incomplete download"])
	for name, (data, _, _) in fx.items():
		with open(os.path.join(d, name), "wb") as f:
			f.write(data)
	return fx


def run_(t):
	d = harness.tmpdir("sniff")
	mnt = harness.tmpdir("mnt")
	fx = fixtures(d)
	for name, (data, code, words) in sorted(fx.items()):
		p = os.path.join(d, name)
		for cmd in ([STFS_INSPECT, p], [STFS, p, mnt]):
			r = run(cmd, timeout=30)
			err = r.stderr.decode("utf-8", "replace")
			what = "%s %s" % (os.path.basename(cmd[0]), name)
			t.eq(r.returncode, 1, "%s: exit status 1 (%s)" % (what, err))
			t.check(("%s: %s: " % (p, code)) in err,
				"%s: names the file and %s: %r" % (what, code, err))
			for w in words:
				t.check(w in err, "%s: says %r: %r" % (what, w, err))
			t.eq(len(err.strip().splitlines()), 1,
			     "%s: one line: %r" % (what, err))
			t.check(not harness.is_mounted(mnt),
				"%s: nothing mounted" % what)
			if harness.is_mounted(mnt):
				harness.force_unmount(mnt)

	# a valid file is never "sniffed": same file, whole
	ok = os.path.join(d, "whole.safetensors")
	with open(ok, "wb") as f:
		f.write(struct.pack("<Q", len(hdr_of(fx))) + hdr_of(fx) +
			bytes(range(250)) * 16)
	r = run([STFS_INSPECT, ok])
	t.eq(r.returncode, 0, "the untruncated file is valid: %r" % r.stderr)

	# a shard of an index that is an LFS pointer: the shard is named
	sd = os.path.join(d, "set")
	os.makedirs(sd)
	with open(os.path.join(sd, "model.safetensors.index.json"), "w") as f:
		json.dump({"metadata": {}, "weight_map": {
			"w": "model-00001-of-00001.safetensors"}}, f)
	shard = os.path.join(sd, "model-00001-of-00001.safetensors")
	with open(shard, "wb") as f:
		f.write(fx["model.safetensors"][0])
	for cmd in ([STFS_INSPECT, sd], [STFS, sd, mnt]):
		r = run(cmd, timeout=30)
		err = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 1, "set with an LFS shard: exit 1 (%s)" % err)
		t.check(shard in err and "git lfs pull" in err,
			"set with an LFS shard: names the shard and says "
			"git lfs pull: %r" % err)
		if harness.is_mounted(mnt):
			harness.force_unmount(mnt)
	harness.rmtree_safe(d)


def hdr_of(fx):
	data = fx["cut-header.safetensors"][0]
	n = struct.unpack("<Q", data[:8])[0]
	return fx["cut-data.safetensors"][0][8:8 + n]


harness.main("int-sniff", run_, mounts=True)
