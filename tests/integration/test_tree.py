#!/usr/bin/env python3
"""int-tree: a directory of models mounts as a tree (issue 12.3): one
subdirectory per model (named by catalog.h's rules), intermediate
directories as needed, every model with its own files and summary, the
root's __summary__.json listing them; every tensor byte-exact."""

import json
import os
import random

import harness
from harness import gen


def write_model(path, spec, seed):
	rng = random.Random(seed)
	ts = [(name, dt, shape, rng.randbytes(gen.nbytes_of(dt, shape)))
	      for name, dt, shape in spec]
	gen.write_safetensors(path, ts, {"format": "pt"})
	return harness.SrcFile(path)


def run(t):
	d = harness.tmpdir("tree")
	root = os.path.join(d, "models")
	os.makedirs(os.path.join(root, "sub", "deeper"))
	os.makedirs(os.path.join(root, "empty"))
	models = {
		"a": write_model(os.path.join(root, "a.safetensors"),
				 [("w", "F32", [3, 5]), ("b", "BF16", [7])], 1),
		"v2.1": write_model(os.path.join(root, "v2.1.safetensors"),
				    [("x.y", "U8", [100])], 2),
		"sub/deeper": write_model(os.path.join(
			root, "sub", "deeper", "c.safetensors"),
			[("t", "I64", [4])], 3),
	}
	with harness.Mount(t, root) as m:
		mnt = m.path
		t.eq(sorted(os.listdir(mnt)), ["__summary__.json", "a", "sub",
					       "v2.1"],
		     "root: the models, their directories and the summary")
		# sub/deeper holds one model and nothing else: it is that model
		t.eq(os.listdir(os.path.join(mnt, "sub")), ["deeper"],
		     "sub/: only the directory leading to a model")
		t.check(not os.path.exists(os.path.join(mnt, "empty")),
			"a directory without models does not appear")
		for path, S in models.items():
			md = os.path.join(mnt, path)
			names = {harness.encode_name(x.name) for x in S.tensors}
			t.eq(set(os.listdir(md)), names | {n + ".json" for n in names}
			     | {"__metadata__.json", "__summary__.json"},
			     "%s: the model's files" % path)
			for x in S.tensors:
				p = os.path.join(md, harness.encode_name(x.name))
				with open(p, "rb") as f:
					t.check(f.read() == S.read(x), "%s: %s bytes"
						% (path, x.name))
			with open(os.path.join(md, "__summary__.json")) as f:
				s = json.load(f)
			t.eq(s["source"], os.path.realpath(S.path),
			     "%s: __summary__.json names its file" % path)
			t.eq(s["tensors"], len(S.tensors), "%s: tensors" % path)
			x = S.tensors[0]
			npy = os.path.join(md, ".npy", harness.encode_name(x.name) +
					   ".npy")
			t.check(os.path.isfile(npy), "%s: hidden .npy/ by path"
				% path)
		with open(os.path.join(mnt, "__summary__.json")) as f:
			s = json.load(f)
		t.eq(s["models"], 3, "root summary: 3 models")
		t.eq([e["path"] for e in s["model_list"]],
		     ["a", "sub/deeper", "v2.1"], "root summary: paths")
		e = s["model_list"][0]
		t.eq(e["parameters"], {"F32": 15, "BF16": 7},
		     "root summary: parameters per dtype")
		t.eq(e["tensors"], 2, "root summary: tensors")
		found = []
		for top, ds, fs in os.walk(mnt):
			found += [os.path.relpath(os.path.join(top, f), mnt)
				  for f in fs]
		t.eq(len(found), 1 + sum(2 * len(S.tensors) + 2
					 for S in models.values()),
		     "find sees the models' files only (no view)")
		st = os.stat(os.path.join(mnt, "sub"))
		t.check(st.st_mode & 0o222 == 0, "tree directories are read-only")


harness.main("int-tree", run, mounts=True)
