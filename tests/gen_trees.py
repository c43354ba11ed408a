#!/usr/bin/env python3
"""gen_trees.py - model trees as they lie on servers, for the tests (issue 12).

    hub_cache(root)      a Hugging Face hub cache as huggingface_hub leaves it:
                         models--ORG--NAME/{blobs/<sha256>, snapshots/<rev>/...
                         (relative symlinks into ../../blobs), refs/main}; a
                         sharded model, a single-file model with two revisions,
                         a diffusers pipeline, a model without an org, a
                         repo with a TensorFlow .h5 only, a dataset repo,
                         .locks/, version.txt
    pipeline(d)          a diffusers pipeline directory (outside a cache)
    loras(d)             a folder of LoRA-like files with awkward names and a
                         checkpoints/ subdirectory
    many(d, n)           n small models in one directory

Each returns {mount-relative dir: (label, [files])}: what the mount of the
directory should show, label being the absolute path of the model's file or
index, files the .safetensors files holding its tensors.

    gen_trees.py DIR     write all of them under DIR (hub/, pipe/, loras/)
"""

import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

DTYPES = ["F32", "F16", "BF16", "I64", "U8", "F8_E4M3", "I32"]


def tensors(prefix, n, seed):
	out = []
	for i in range(n):
		dtype = DTYPES[(i + seed) % len(DTYPES)]
		shape = [1 + (i * 5 + seed) % 7, 1 + (i * 3) % 4]
		out.append(("%s.%d.weight" % (prefix, i), dtype, shape,
			    gen.filler(dtype, shape, seed * 1009 + i)))
	return out


def write_set(d, stem, ts, nshards):
	"""stem-0000i-of-0000n.safetensors and stem.safetensors.index.json in d;
	returns (index path, shard paths)."""
	os.makedirs(d, exist_ok=True)
	k = (len(ts) + nshards - 1) // nshards
	wm, paths, total = {}, [], 0
	for i in range(nshards):
		name = "%s-%05d-of-%05d.safetensors" % (stem, i + 1, nshards)
		group = ts[i * k:(i + 1) * k]
		gen.write_safetensors(os.path.join(d, name), group, {"format": "pt"})
		paths.append(os.path.join(d, name))
		for t in group:
			wm[t[0]] = name
			total += gen.nbytes_of(t[1], t[2])
	idx = os.path.join(d, stem + ".safetensors.index.json")
	with open(idx, "w") as f:
		json.dump({"metadata": {"total_size": total},
			   "weight_map": dict(sorted(wm.items()))}, f, indent=2)
	return idx, paths


def write_json(path, obj):
	os.makedirs(os.path.dirname(path), exist_ok=True)
	with open(path, "w") as f:
		json.dump(obj, f)


def pipeline(d, seed=40):
	"""model_index.json, unet/ (sharded), vae/, text_encoder/, configs."""
	exp = {}
	write_json(os.path.join(d, "model_index.json"),
		   {"_class_name": "StableDiffusionPipeline",
		    "unet": ["diffusers", "UNet2DConditionModel"]})
	write_json(os.path.join(d, "unet", "config.json"), {"in_channels": 4})
	idx, shards = write_set(os.path.join(d, "unet"), "diffusion_pytorch_model",
				tensors("down_blocks", 9, seed), 2)
	exp["unet"] = (idx, shards)
	os.makedirs(os.path.join(d, "vae"))
	p = os.path.join(d, "vae", "diffusion_pytorch_model.safetensors")
	gen.write_safetensors(p, tensors("decoder", 4, seed + 1), {"format": "pt"})
	exp["vae"] = (p, [p])
	os.makedirs(os.path.join(d, "text_encoder"))
	p = os.path.join(d, "text_encoder", "model.safetensors")
	gen.write_safetensors(p, tensors("encoder.layers", 5, seed + 2),
			      {"format": "pt"})
	exp["text_encoder"] = (p, [p])
	write_json(os.path.join(d, "scheduler", "scheduler_config.json"), {})
	write_json(os.path.join(d, "tokenizer", "vocab.json"), {"a": 1})
	return exp


def loras(d, seed=60):
	"""Awkward names, a checkpoints/ subdirectory, and files that are not
	models.  Mount-relative dirs follow catalog.h's naming."""
	exp = {}
	os.makedirs(os.path.join(d, "checkpoints"))
	names = {"my lora.safetensors": "my lora",
		 "caf\u00e9-style.safetensors": "caf\u00e9-style",
		 "\u65e5\u672c\u8a9e.safetensors": "\u65e5\u672c\u8a9e",
		 "v2.1.safetensors": "v2.1",
		 "x.json.safetensors": "x.json",
		 "100%.safetensors": "100%25",
		 "checkpoints/step-1000.safetensors": "checkpoints/step-1000",
		 "checkpoints/step-2000.safetensors": "checkpoints/step-2000"}
	for i, (f, mdir) in enumerate(sorted(names.items())):
		p = os.path.join(d, f)
		gen.write_safetensors(p, tensors("lora_unet.up", 3, seed + i),
				      {"ss_network_dim": str(4 + i)})
		exp[mdir] = (p, [p])
	with open(os.path.join(d, "README.md"), "w") as f:
		f.write("LoRAs\n")
	os.makedirs(os.path.join(d, "empty", "deeper"))
	return exp


def many(d, n, seed=80):
	os.makedirs(d, exist_ok=True)
	exp = {}
	for i in range(n):
		p = os.path.join(d, "m%05d.safetensors" % i)
		gen.write_safetensors(p, tensors("w", 2, seed + i % 50), None)
		exp["m%05d" % i] = (p, [p])
	return exp


# ---- the hub cache ------------------------------------------------------------

class Repo:
	def __init__(self, hub, kind, repo_id):
		self.dir = os.path.join(hub, "%ss--%s" % (kind,
							 repo_id.replace("/", "--")))
		os.makedirs(os.path.join(self.dir, "blobs"), exist_ok=True)

	def add(self, rev, relpath, src):
		"""Move src into blobs/ under its sha256, link it from the
		snapshot; returns the snapshot path."""
		with open(src, "rb") as f:
			sha = hashlib.sha256(f.read()).hexdigest()
		blob = os.path.join(self.dir, "blobs", sha)
		if os.path.exists(blob):
			os.unlink(src)
		else:
			os.replace(src, blob)
		link = os.path.join(self.dir, "snapshots", rev, relpath)
		os.makedirs(os.path.dirname(link), exist_ok=True)
		up = "../" * (2 + relpath.count("/"))
		os.symlink(up + "blobs/" + sha, link)
		return link

	def add_tree(self, rev, tree, exp=None, prefix=""):
		"""Move every file under tree into the snapshot; exp's paths are
		mapped to their snapshot paths (returned with prefix)."""
		where = {}
		for dp, _, files in os.walk(tree):
			for f in files:
				src = os.path.join(dp, f)
				rel = os.path.relpath(src, tree)
				where[src] = self.add(rev, rel, src)
		out = {}
		for k, (label, files) in (exp or {}).items():
			key = prefix + ("/" + k if k else "") if prefix else k
			out[key] = (where[label], [where[p] for p in files])
		return out

	def ref(self, rev):
		os.makedirs(os.path.join(self.dir, "refs"), exist_ok=True)
		with open(os.path.join(self.dir, "refs", "main"), "w") as f:
			f.write(rev)


def rev(i):
	return hashlib.sha1(b"rev%d" % i).hexdigest()


def hub_cache(root, seed=20):
	"""Returns {mount dir: (label, files)} for a mount of root."""
	os.makedirs(root, exist_ok=True)
	work = os.path.join(root, ".work")
	exp = {}

	# a sharded model with its configs
	r = Repo(root, "model", "org/tiny-llama")
	t = os.path.join(work, "llama")
	idx, shards = write_set(t, "model", tensors("model.layers", 12, seed), 3)
	write_json(os.path.join(t, "config.json"), {"model_type": "llama"})
	write_json(os.path.join(t, "tokenizer.json"), {"version": "1.0"})
	exp.update(r.add_tree(rev(1), t, {"": (idx, shards)}, "org/tiny-llama"))
	r.ref(rev(1))

	# one file, two revisions: main is the second
	r = Repo(root, "model", "org/tiny-bert")
	for i in (2, 3):
		t = os.path.join(work, "bert%d" % i)
		os.makedirs(t)
		p = os.path.join(t, "model.safetensors")
		gen.write_safetensors(p, tensors("bert.encoder", 4, seed + i),
				      {"format": "pt", "rev": str(i)})
		e = r.add_tree(rev(i), t, {"": (p, [p])}, "org/tiny-bert")
	exp.update(e)
	r.ref(rev(3) + "\n")

	# a diffusers pipeline
	r = Repo(root, "model", "org/tiny-sd")
	t = os.path.join(work, "sd")
	exp.update(r.add_tree(rev(4), t, pipeline(t, seed + 10), "org/tiny-sd"))
	r.ref(rev(4))

	# a repo without an organisation
	r = Repo(root, "model", "gpt2")
	t = os.path.join(work, "gpt2")
	os.makedirs(t)
	p = os.path.join(t, "model.safetensors")
	gen.write_safetensors(p, tensors("h", 3, seed + 20), {"format": "pt"})
	exp.update(r.add_tree(rev(5), t, {"": (p, [p])}, "gpt2"))
	r.ref(rev(5))

	# left out: a repo with neither safetensors nor PyTorch weights
	# (.bin-only repos are models: test_torch.py), a dataset, .locks,
	# version.txt
	r = Repo(root, "model", "org/h5-only")
	t = os.path.join(work, "h5")
	os.makedirs(t)
	with open(os.path.join(t, "tf_model.h5"), "wb") as f:
		f.write(b"\x89HDF\r\n\x1a\n" + bytes(60))
	r.add_tree(rev(6), t)
	r.ref(rev(6))
	r = Repo(root, "dataset", "org/some-data")
	t = os.path.join(work, "data")
	os.makedirs(t)
	gen.write_safetensors(os.path.join(t, "train.safetensors"),
			      tensors("x", 2, seed + 30), None)
	r.add_tree(rev(7), t)
	r.ref(rev(7))
	lk = os.path.join(root, ".locks", "models--org--tiny-bert")
	os.makedirs(lk)
	open(os.path.join(lk, "0" * 64 + ".lock"), "w").close()
	with open(os.path.join(root, "version.txt"), "w") as f:
		f.write("1")
	os.system("rm -rf '%s'" % work)
	return exp


def main(argv):
	if len(argv) != 2:
		sys.stderr.write(__doc__)
		return 2
	d = argv[1]
	for name, fn in (("hub", hub_cache), ("pipe", pipeline),
			 ("loras", loras)):
		exp = fn(os.path.join(d, name))
		for k in sorted(exp):
			print("%s/%s <- %s" % (name, k, exp[k][0]))
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv))
