#!/usr/bin/env python3
"""int-places: every format from every place (issue 29.4).

One folder of models in every format stfs reads (a safetensors file, a
GGUF file, a GGUF split set, a pytorch_model.bin beside a Trainer's
optimizer.pt, a sharded pytorch_model.bin.index.json set, and a folder
shipping both model.safetensors and pytorch_model.bin) lies on disk, in a
bucket of the s3 look-alike (s3srv.py: s3rver behind the SigV4-checking
s3proxy.py) and in a repository of the Hub look-alike (hubsim.py).  The
three trees must hold the same model directories, and every tensor read
through each is compared with the bytes its writer put there (torch.load,
gguf_gen.py, the safetensors writer: the test trusts its own fixtures).
Then each model file is mounted by its s3:// URL (and GGUF and PyTorch
files by their hf:// path), as a local file is.  The S3 listing opens
what the tree needs and nothing else: the pytorch_model.bin its folder's
safetensors model hides and the optimizer.pt are never requested.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import hubsim  # noqa: E402
import s3srv  # noqa: E402

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import gen  # noqa: E402
import gguf_gen  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

REGION = "eu-west-3"
AKID = "AKIAPLACESTEST00001"
KEYS = {AKID: ("places-secret-" + os.urandom(8).hex(), None)}
TOKEN = "hf_places"

# the model directories of the tree, and the files of each
DIRS = ["both", "gguf/split", "gguf/tiny", "st", "torch/one",
	"torch/sharded"]


def raw_bytes(t):
	return t.detach().contiguous().numpy().tobytes()


def state_dict(seed):
	g = torch.Generator().manual_seed(seed)
	return {"w": torch.randn(4, 3, generator=g),
		"b": torch.randint(-9, 9, (5,), generator=g),
		"h": torch.randn(2, 8, generator=g).half()}


def make_zoo(root):
	"""Write the folder; {model directory: {tensor: bytes}}."""
	want = {}

	def path(rel):
		p = os.path.join(root, rel)
		os.makedirs(os.path.dirname(p), exist_ok=True)
		return p

	T = [("t.%d" % i, "F32", [3 + i], gen.bulk_bytes(40 + i, (3 + i) * 4))
	     for i in range(3)]
	gen.write_safetensors(path("st/x.safetensors"), T)
	want["st"] = {n: b for n, _, _, b in T}
	T = [("only.safetensors", "U8", [7], gen.bulk_bytes(50, 7))]
	gen.write_safetensors(path("both/model.safetensors"), T)
	want["both"] = {"only.safetensors": T[0][3]}
	torch.save(state_dict(1), path("both/pytorch_model.bin"))

	rng = np.random.default_rng(29)
	G = [(name, ty, shape, gguf_gen.random_bytes(ty, shape, rng))
	     for name, ty, shape in [("tok_embd.weight", "F16", [6, 4]),
				     ("blk.0.attn_q.weight", "Q8_0", [2, 32]),
				     ("output_norm.weight", "F32", [5])]]
	gguf_gen.write(path("gguf/tiny.gguf"), G,
		       metadata=[("general.name", "str", "tiny")])
	want["gguf/tiny"] = {n: b for n, _, _, b in G}
	gguf_gen.write_split(path("gguf/split/big"), G, 2)
	want["gguf/split"] = dict(want["gguf/tiny"])

	sd = state_dict(2)
	torch.save(sd, path("torch/one/pytorch_model.bin"))
	torch.save({"state": {}, "param_groups": []},
		   path("torch/one/optimizer.pt"))
	want["torch/one"] = {k: raw_bytes(v) for k, v in sd.items()}
	parts = [state_dict(3), {"head": torch.arange(6)}]
	wmap = {}
	for i, part in enumerate(parts):
		name = "pytorch_model-%05d-of-%05d.bin" % (i + 1, len(parts))
		torch.save(part, path("torch/sharded/" + name))
		wmap.update({k: name for k in part})
	with open(path("torch/sharded/pytorch_model.bin.index.json"), "w") as f:
		json.dump({"metadata": {}, "weight_map": wmap}, f)
	want["torch/sharded"] = {k: raw_bytes(v) for p in parts
				 for k, v in p.items()}
	return want


def files_of(root):
	"""{relative path: bytes} of every file below root."""
	out = {}
	for d, _, files in os.walk(root):
		for f in files:
			p = os.path.join(d, f)
			with open(p, "rb") as fh:
				out[os.path.relpath(p, root)] = fh.read()
	return out


def model_dirs(mnt):
	"""The directories of the mount that are models (relative)."""
	out = []
	for d, dirs, files in os.walk(mnt):
		dirs[:] = [x for x in dirs if not x.startswith((".", "__"))]
		if "__metadata__.json" in files:
			out.append(os.path.relpath(d, mnt))
	return sorted(out)


def check_model(t, mdir, want, label):
	"""Every tensor of want, byte-exact; no tensor more."""
	got = sorted(harness.decode_name(f) for f in os.listdir(mdir)
		     if not f.endswith(".json") and not f.startswith((".", "__")))
	t.eq(got, sorted(want), "%s: the tensors" % label)
	for name, data in sorted(want.items()):
		p = os.path.join(mdir, harness.encode_name(name))
		try:
			with open(p, "rb") as f:
				t.check(f.read() == data, "%s: %s: the bytes its "
					"writer wrote" % (label, name))
		except OSError as e:
			t.check(False, "%s: %s: %s" % (label, name, e))


def check_tree(t, src, want, env, label, ready=60):
	with harness.Mount(t, src, env=env, ready_timeout=ready) as m:
		t.eq(model_dirs(m.path), DIRS, "%s: the model directories "
		     "(those of the local folder)" % label)
		for rel in DIRS:
			if os.path.isdir(os.path.join(m.path, rel)):
				check_model(t, os.path.join(m.path, rel), want[rel],
					    "%s: %s" % (label, rel))


# one file each, by its name: (path below the zoo, the model it holds)
ONE = [("gguf/tiny.gguf", "gguf/tiny"),
       ("gguf/split/big-00001-of-00002.gguf", "gguf/split"),
       ("gguf/split/big-00002-of-00002.gguf", "gguf/split"),
       ("torch/one/pytorch_model.bin", "torch/one"),
       ("torch/sharded/pytorch_model.bin.index.json", "torch/sharded"),
       ("both/pytorch_model.bin", None)]


def check_s3(t, d, zoo, want):
	why = s3srv.available()
	if why:
		t.fatal(why)
	home = os.path.join(d, "home")
	os.makedirs(home)
	os.makedirs(os.path.join(d, "srv"))
	with s3srv.S3(os.path.join(d, "srv"), KEYS, region=REGION) as srv:
		c = srv.client(AKID)
		c.create_bucket(Bucket="zoo")
		for rel, data in sorted(files_of(zoo).items()):
			c.put_object(Bucket="zoo", Key="m/" + rel, Body=data)
		env = srv.user_env(AKID, home)
		mark = srv.mark()
		check_tree(t, "s3://zoo/m/", want, env, "s3 prefix")
		asked = [r["path"] for r in srv.requests_since(mark)]
		for rel in ("both/pytorch_model.bin", "torch/one/optimizer.pt"):
			t.check(not any(p.endswith(rel) for p in asked),
				"s3 prefix: %s, no model of its folder, is never "
				"requested: %r" % (rel, asked))
		t.check(any(p.endswith("big-00002-of-00002.gguf") for p in asked),
			"s3 prefix: the split set's second part is read")
		for rel, model in ONE + [("torch/one/optimizer.pt", None)]:
			url = "s3://zoo/m/" + rel
			w = want[model] if model else tensors_of_torch(
				os.path.join(zoo, rel))
			with harness.Mount(t, url, env=env, ready_timeout=60) as m:
				check_model(t, m.path, w, url)
		err = srv.proxy_errors()
		t.check("Traceback" not in err, "s3proxy: no exception: %s"
			% err[-2000:])


def tensors_of_torch(path):
	return {k: raw_bytes(v) for k, v in torch.load(path).items()
		if isinstance(v, torch.Tensor)}


def check_hub(t, d, zoo, want):
	sim = hubsim.HubSim(tokens=(TOKEN,), ttl=60.0, small=4096)
	sim.start()
	try:
		sim.add_repo("org/zoo").commit(files_of(zoo))
		home = os.path.join(d, "hfhome")
		os.makedirs(home)
		env = sim.user_env(home, TOKEN)
		check_tree(t, "hf://org/zoo", want, env, "hf://")
		for rel, model in ONE:
			url = "hf://org/zoo/" + rel
			w = want[model] if model else tensors_of_torch(
				os.path.join(zoo, rel))
			with harness.Mount(t, url, env=env, ready_timeout=60) as m:
				check_model(t, m.path, w, url)
	finally:
		sim.stop()


def run(t):
	d = harness.tmpdir("places")
	zoo = os.path.join(d, "zoo")
	want = make_zoo(zoo)
	check_tree(t, zoo, want, None, "local folder")
	for rel, model in ONE:
		if model:
			with harness.Mount(t, os.path.join(zoo, rel)) as m:
				check_model(t, m.path, want[model], "local " + rel)
	check_s3(t, d, zoo, want)
	check_hub(t, d, zoo, want)
	harness.rmtree_safe(d)


if __name__ == "__main__":
	harness.main("int-places", run, mounts=True)
