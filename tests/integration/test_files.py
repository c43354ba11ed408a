#!/usr/bin/env python3
"""int-files: MNT/.files/, the model's own files as they are at the source
(issue 36), from local sources: a folder, a tree of folders, the Hugging
Face hub cache (its root, a repo, a snapshot), a file and an index named
alone.

For each, .files/ lists exactly the model's files (its shards and index,
config.json, the tokenizer's files, README.md, other checkpoints and the
folders without models; not the other models' files, not the folders
holding models, not names starting with '.') with their sizes; every
file's sha256 equals the source's; a loader written here as transformers
loads a sharded model (config.json, the index, an mmap of each shard,
every tensor read as a view of the mapping in safe_open's key order)
gets every tensor equal to the source's; and .files/ is hidden like the
other views (ls -a and cp -r do not see it; -o views=visible lists it,
-o views=off has none).

.dequant/.files/ of an FP8-block, a GPTQ and an NF4 model (test_quant.py's)
is the plain model's folder: config.json without quantization_config
(torch_dtype bfloat16 when it named none), quantize_config.json left out,
and model.safetensors holding every quantized weight as its .dequant/.npy/
values in the config's torch_dtype (BF16, F16: rounded as torch rounds)
and every other tensor as stored, the parts left out.

The helpers (tree_of, check_files, load_like_transformers, tensors_of)
serve test_files_remote.py too.
"""

import hashlib
import json
import mmap
import os
import random
import shutil
import struct
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import hubsim  # noqa: E402
import test_quant as tq  # noqa: E402
from harness import gen  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_sharded  # noqa: E402


# ---- what a folder holds, what a mount shows ------------------------------

def tree_of(root):
	"""{path below root: bytes} of every regular file (symlinks followed)."""
	out = {}
	for top, dirs, files in os.walk(root, followlinks=True):
		for f in files:
			p = os.path.join(top, f)
			with open(p, "rb") as fh:
				out[os.path.relpath(p, root)] = fh.read()
	return out


def check_files(t, files_dir, want, label):
	"""files_dir (a mount's .files/) lists exactly want ({path: bytes}),
	each file its size in stat before it is read and its sha256."""
	got = {}
	for top, dirs, files in os.walk(files_dir):
		for f in files:
			p = os.path.join(top, f)
			got[os.path.relpath(p, files_dir)] = p
	t.eq(sorted(got), sorted(want), "%s: .files/ lists the model's files"
	     % label)
	for rel in sorted(set(got) & set(want)):
		p = got[rel]
		t.eq(os.stat(p).st_size, len(want[rel]), "%s: %s: its size in "
		     "stat" % (label, rel))
		h = hashlib.sha256()
		with open(p, "rb") as f:
			for b in iter(lambda: f.read(1 << 20), b""):
				h.update(b)
		t.eq(h.hexdigest(), hashlib.sha256(want[rel]).hexdigest(),
		     "%s: %s: sha256" % (label, rel))


def tensors_of(data):
	"""{name: bytes} of the tensors of a safetensors file's bytes, parsed
	here (nothing of stfs)."""
	(n,) = struct.unpack("<Q", data[:8])
	h = json.loads(data[8:8 + n])
	h.pop("__metadata__", None)
	return {k: data[8 + n + v["data_offsets"][0]:8 + n +
			v["data_offsets"][1]] for k, v in h.items()}


def source_tensors(files):
	"""Every tensor of the safetensors files of {path: bytes}."""
	out = {}
	for rel, data in files.items():
		if rel.endswith(".safetensors"):
			out.update(tensors_of(data))
	return out


def load_like_transformers(d):
	"""Load the model in folder d as transformers' from_pretrained reads
	a (sharded) safetensors checkpoint: config.json, the index's
	weight_map (else model.safetensors), each shard in the index's sorted
	order mmapped, every tensor a numpy view of the mapping in safe_open's
	(sorted) key order, copied out.  {name: bytes}, and the config."""
	with open(os.path.join(d, "config.json")) as f:
		config = json.load(f)
	index = os.path.join(d, "model.safetensors.index.json")
	if os.path.exists(index):
		with open(index) as f:
			shards = sorted(set(json.load(f)["weight_map"].values()))
	else:
		shards = ["model.safetensors"]
	return mmap_tensors(d, shards), config


def mmap_tensors(d, shards):
	"""{name: bytes} of the safetensors files shards in folder d, as
	safe_open reads them: each mmapped, every tensor a numpy view of the
	mapping in sorted key order, copied out."""
	out = {}
	for s in shards:
		with open(os.path.join(d, s), "rb") as f:
			mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
			try:
				(n,) = struct.unpack("<Q", mm[:8])
				h = json.loads(mm[8:8 + n])
				h.pop("__metadata__", None)
				for k in sorted(h):
					a, b = h[k]["data_offsets"]
					v = np.frombuffer(mm, dtype=np.uint8,
							  count=b - a,
							  offset=8 + n + a)
					out[k] = v.tobytes()
					del v
			finally:
				mm.close()
	return out


def check_loader(t, files_dir, files, label):
	got, config = load_like_transformers(files_dir)
	t.eq(config, json.loads(files["config.json"]), "%s: the loader's "
	     "config.json" % label)
	want = source_tensors({k: v for k, v in files.items()
			       if "/" not in k})
	t.eq(sorted(got), sorted(want), "%s: the loader finds every tensor"
	     % label)
	bad = [k for k in want if got.get(k) != want[k]]
	t.eq(bad, [], "%s: every tensor the loader reads equals the source's"
	     % label)


# ---- the folders ------------------------------------------------------------

def write(path, data):
	os.makedirs(os.path.dirname(path), exist_ok=True)
	with open(path, "wb") as f:
		f.write(data)


def tokenizer_json(rng, n):
	vocab = {"tok%d_%s" % (i, rng.randbytes(4).hex()): i for i in range(n)}
	return json.dumps({"version": "1.0", "model": {"type": "BPE",
						       "vocab": vocab}}).encode()


def model_folder(d, rng, shards=3, tensors=24):
	"""A Hub-style model folder: a sharded set, its configs, tokenizer,
	README, a PyTorch file beside (it yields to the safetensors), an
	original/ folder of a checkpoint, and what must not show (.gitattributes,
	.cache/)."""
	gen_sharded.write_sharded(d, gen_sharded.mixed_tensors(tensors, seed=5),
				  shards)
	write(os.path.join(d, "config.json"), json.dumps(
		{"model_type": "llama", "torch_dtype": "bfloat16",
		 "hidden_size": 64}).encode())
	write(os.path.join(d, "generation_config.json"), b'{"do_sample": true}')
	write(os.path.join(d, "tokenizer.json"), tokenizer_json(rng, 4000))
	write(os.path.join(d, "tokenizer_config.json"), b'{"model_max_length": 8}')
	write(os.path.join(d, "special_tokens_map.json"), b'{"bos_token": "<s>"}')
	write(os.path.join(d, "README.md"), b"# a model\n" * 50)
	write(os.path.join(d, "pytorch_model.bin"), rng.randbytes(3000))
	write(os.path.join(d, "original", "params.json"), b'{"dim": 64}')
	write(os.path.join(d, "original", "consolidated.00.pth"),
	      rng.randbytes(5000))
	write(os.path.join(d, ".gitattributes"), b"*.safetensors filter=lfs\n")
	write(os.path.join(d, ".cache", "huggingface", "x.metadata"), b"x")
	return {k: v for k, v in tree_of(d).items()
		if not any(c.startswith(".") for c in k.split("/"))}


def one_model(path, rng, names=("w", "b")):
	os.makedirs(os.path.dirname(path), exist_ok=True)
	gen.write_safetensors(path, [(n, "F32", [3, 4], rng.randbytes(48))
				     for n in names], {"format": "pt"})


# ---- a tree: a diffusers pipeline ----------------------------------------------

def pipeline_folder(d, rng, scale=1):
	"""A diffusers-style pipeline folder ({path: bytes}, names starting
	with '.' left out): model_index.json, unet/ and vae/ each a config and
	one safetensors file, text_encoder/ a sharded set and its index,
	tokenizer/'s text files, scheduler/scheduler_config.json, a README.
	Its tensors are scale KiB each (F16 [scale, 512])."""
	def tensors(prefix, n, seed):
		return [("%s.%d.weight" % (prefix, i), "F16", [scale, 512],
			 gen.bulk_bytes(seed + i, scale << 10)) for i in range(n)]
	write(os.path.join(d, "model_index.json"), json.dumps({
		"_class_name": "StableDiffusionPipeline",
		"_diffusers_version": "0.30.0",
		"scheduler": ["diffusers", "PNDMScheduler"],
		"text_encoder": ["transformers", "CLIPTextModel"],
		"tokenizer": ["transformers", "CLIPTokenizer"],
		"unet": ["diffusers", "UNet2DConditionModel"],
		"vae": ["diffusers", "AutoencoderKL"]}).encode())
	for comp, seed in (("unet", 100), ("vae", 200)):
		write(os.path.join(d, comp, "config.json"), json.dumps(
			{"_class_name": comp, "sample_size": 8}).encode())
		gen.write_safetensors(os.path.join(
			d, comp, "diffusion_pytorch_model.safetensors"),
			tensors("%s.blocks" % comp, 6, seed), {"format": "pt"})
	write(os.path.join(d, "text_encoder", "config.json"),
	      b'{"model_type": "clip_text_model", "hidden_size": 512}')
	gen_sharded.write_sharded(os.path.join(d, "text_encoder"),
				  tensors("text_model.layers", 8, 300), 2)
	write(os.path.join(d, "tokenizer", "vocab.json"), json.dumps(
		{"t%d" % i: i for i in range(500)}).encode())
	write(os.path.join(d, "tokenizer", "merges.txt"),
	      b"#version: 0.2\n" + b"t h\n" * 200)
	write(os.path.join(d, "tokenizer", "tokenizer_config.json"),
	      b'{"model_max_length": 77}')
	write(os.path.join(d, "tokenizer", "special_tokens_map.json"),
	      b'{"bos_token": "<|startoftext|>"}')
	write(os.path.join(d, "scheduler", "scheduler_config.json"),
	      b'{"_class_name": "PNDMScheduler", "num_train_timesteps": 1000}')
	write(os.path.join(d, "README.md"), b"# a pipeline\n")
	write(os.path.join(d, ".gitattributes"), b"*.safetensors filter=lfs\n")
	return {k: v for k, v in tree_of(d).items()
		if not any(c.startswith(".") for c in k.split("/"))}


def load_like_diffusers(d):
	"""Load the pipeline in folder d as diffusers' from_pretrained reads
	it: model_index.json, then per component its folder's config
	(config.json, scheduler_config.json, tokenizer_config.json) and its
	weights (the index's shards, else the one safetensors file), each
	mmapped and every tensor read as a view of the mapping.  {component:
	(config, {name: bytes})}."""
	with open(os.path.join(d, "model_index.json")) as f:
		index = json.load(f)
	out = {}
	for comp in sorted(k for k in index if not k.startswith("_")):
		cd = os.path.join(d, comp)
		config = None
		for name in ("config.json", "scheduler_config.json",
			     "tokenizer_config.json"):
			if os.path.exists(os.path.join(cd, name)):
				with open(os.path.join(cd, name)) as f:
					config = json.load(f)
				break
		idx = [n for n in os.listdir(cd)
		       if n.endswith(".safetensors.index.json")]
		if idx:
			with open(os.path.join(cd, idx[0])) as f:
				shards = sorted(set(json.load(f)["weight_map"]
						    .values()))
		else:
			shards = sorted(n for n in os.listdir(cd)
					if n.endswith(".safetensors"))
		out[comp] = (config, mmap_tensors(cd, shards))
	return out


def check_pipeline(t, files_dir, files, label):
	"""The root's .files/ is the pipeline's folder: exactly its files,
	sizes and sha256, and a diffusers-like load of it gets every
	component's config and every tensor equal to the source's."""
	check_files(t, files_dir, files, label)
	got = load_like_diffusers(files_dir)
	t.eq(sorted(got), ["scheduler", "text_encoder", "tokenizer", "unet",
			   "vae"], "%s: the loader finds every component" % label)
	for comp, (config, tensors) in sorted(got.items()):
		cfg = [v for k, v in files.items() if k.startswith(comp + "/")
		       and k.rsplit("/", 1)[1] in ("config.json",
						   "scheduler_config.json",
						   "tokenizer_config.json")]
		t.eq(config, json.loads(cfg[0]), "%s: %s: its config"
		     % (label, comp))
		want = source_tensors({k: v for k, v in files.items()
				       if k.startswith(comp + "/")})
		t.eq(sorted(tensors), sorted(want), "%s: %s: every tensor "
		     "found" % (label, comp))
		bad = [k for k in want if tensors.get(k) != want[k]]
		t.eq(bad, [], "%s: %s: every tensor equals the source's"
		     % (label, comp))
	t.check(any(len(v) for _, v in got.values()), "%s: tensors read"
		% label)


# ---- the cases ----------------------------------------------------------------

def check_attrs(t, fd, d, label):
	"""Each file of .files/ has its own file's owner, times and read
	bits, not the model's: a private file stays private."""
	for rel in ("config.json", "notes.private", "original/params.json",
		    "model-00001-of-00003.safetensors"):
		a, b = os.stat(os.path.join(fd, rel)), os.stat(os.path.join(d, rel))
		t.eq((a.st_mode & 0o7777, a.st_uid, a.st_gid, a.st_mtime_ns),
		     (b.st_mode & 0o444, b.st_uid, b.st_gid, b.st_mtime_ns),
		     "%s: %s: its own mode, owner and time" % (label, rel))


def local_folder(t, rng):
	d = os.path.join(harness.tmpdir("files"), "m")
	files = model_folder(d, rng)
	write(os.path.join(d, "notes.private"), b"not for others\n")
	os.chmod(os.path.join(d, "notes.private"), 0o600)
	os.chown(os.path.join(d, "notes.private"), 4321, 4321)
	os.utime(os.path.join(d, "config.json"), ns=(10 ** 18, 10 ** 18))
	files["notes.private"] = b"not for others\n"
	with harness.Mount(t, d) as m:
		fd = os.path.join(m.path, ".files")
		check_attrs(t, fd, d, "folder")
		t.check(".files" not in os.listdir(m.path), "folder: ls -a "
			"does not show .files")
		check_files(t, fd, files, "folder")
		check_loader(t, fd, files, "folder")
		# cp -r of the mount copies the model as stored, no .files/
		dst = os.path.join(harness.tmpdir("cp"), "copy")
		r = subprocess.run(["cp", "-r", m.path, dst], timeout=60)
		t.eq(r.returncode, 0, "folder: cp -r of the mount")
		t.check(not os.path.exists(os.path.join(dst, ".files")),
			"folder: cp -r does not copy .files/")
	# the index named alone: its folder
	with harness.Mount(t, os.path.join(d, "model.safetensors.index.json"),
			   args=["-o", "views=visible"]) as m:
		t.check(".files" in os.listdir(m.path), "views=visible lists "
			".files")
		check_files(t, os.path.join(m.path, ".files"), files,
			    "the index named alone")
	with harness.Mount(t, d, args=["-o", "views=off"]) as m:
		t.check(not os.path.exists(os.path.join(m.path, ".files")),
			"views=off: no .files")


def named_file(t, rng):
	d = harness.tmpdir("files1")
	one_model(os.path.join(d, "model.safetensors"), rng)
	write(os.path.join(d, "config.json"), b"{}")
	with open(os.path.join(d, "model.safetensors"), "rb") as f:
		want = {"model.safetensors": f.read()}
	with harness.Mount(t, os.path.join(d, "model.safetensors")) as m:
		check_files(t, os.path.join(m.path, ".files"), want,
			    "a file named alone")


def tree(t, rng):
	"""Models side by side share their folder's other files; a folder
	holding a model is that model's, not theirs."""
	root = os.path.join(harness.tmpdir("filestree"), "zoo")
	one_model(os.path.join(root, "a.safetensors"), rng)
	one_model(os.path.join(root, "b.safetensors"), rng, ("x",))
	write(os.path.join(root, "config.json"), b'{"k": 1}')
	write(os.path.join(root, "notes.txt"), b"notes\n")
	write(os.path.join(root, "docs", "x.md"), b"doc\n")
	one_model(os.path.join(root, "sub", "c.safetensors"), rng)
	write(os.path.join(root, "sub", "config.json"), b'{"k": 2}')
	write(os.path.join(root, "sub", "tokenizer.json"), b'{"v": {}}')
	all_files = tree_of(root)
	shared = {k: all_files[k] for k in ("config.json", "notes.txt",
					    "docs/x.md")}
	with harness.Mount(t, root) as m:
		for model, own in (("a", "a.safetensors"), ("b", "b.safetensors")):
			want = dict(shared)
			want[own] = all_files[own]
			check_files(t, os.path.join(m.path, model, ".files"), want,
				    "tree: %s" % model)
		check_files(t, os.path.join(m.path, "sub", ".files"),
			    {k[4:]: v for k, v in all_files.items()
			     if k.startswith("sub/")}, "tree: sub")


def pipeline(t, rng):
	"""A diffusers pipeline folder, a tree of models: its root's .files/
	is all of it, the models' folders too (each model's own .files/
	stays as it was); hidden like the other views; none with
	views=off."""
	d = os.path.join(harness.tmpdir("filespipe"), "sd")
	files = pipeline_folder(d, rng)
	with harness.Mount(t, d) as m:
		t.eq(sorted(os.listdir(m.path)), ["__summary__.json",
						  "text_encoder", "unet", "vae"],
		     "pipeline: a tree of three models")
		t.check(".files" not in os.listdir(m.path), "pipeline: ls -a "
			"does not show the root's .files")
		check_pipeline(t, os.path.join(m.path, ".files"), files,
			       "pipeline folder")
		check_files(t, os.path.join(m.path, "unet", ".files"),
			    {k[5:]: v for k, v in files.items()
			     if k.startswith("unet/")}, "pipeline: unet's own")
	with harness.Mount(t, d, args=["-o", "views=visible"]) as m:
		t.eq(sorted(os.listdir(m.path)), [".files", ".stfs",
						  "__summary__.json",
						  "text_encoder", "unet", "vae"],
		     "pipeline: views=visible lists the root's .files")
		t.eq(os.stat(m.path).st_nlink, 2 + 5, "pipeline: the root's "
		     "links count .stfs/ and .files/")
	with harness.Mount(t, d, args=["-o", "views=off"]) as m:
		t.check(not os.path.exists(os.path.join(m.path, ".files")),
			"pipeline: views=off: no .files")
	return files


def hub_cache(t, rng, pipe):
	"""A hub cache: each repo's snapshot, its symlinks into blobs/
	followed; the cache's root, a repo and a snapshot alike."""
	src = os.path.join(harness.tmpdir("fileshubsrc"), "m")
	files = model_folder(src, rng, shards=2, tensors=12)
	repo = hubsim.Repo("org/tiny")
	sha = repo.commit(files)
	cache = os.path.join(harness.tmpdir("fileshub"), "hub")
	snap = hubsim.make_cache(cache, repo, sha)
	other = hubsim.Repo("org/solo")
	p = os.path.join(harness.tmpdir("solo"), "model.safetensors")
	one_model(p, rng)
	with open(p, "rb") as f:
		solo = {"model.safetensors": f.read(), "config.json": b"{}"}
	osnap = hubsim.make_cache(cache, other, other.commit(solo))
	t.check(os.path.islink(os.path.join(snap, "config.json")) and
		os.path.islink(os.path.join(osnap, "model.safetensors")),
		"hub cache: snapshot files are symlinks into blobs/")
	with harness.Mount(t, cache) as m:
		fd = os.path.join(m.path, "org", "tiny", ".files")
		check_files(t, fd, files, "hub cache root: org/tiny")
		check_loader(t, fd, files, "hub cache root: org/tiny")
		check_files(t, os.path.join(m.path, "org", "solo", ".files"),
			    solo, "hub cache root: org/solo")
	with harness.Mount(t, os.path.join(cache, "models--org--tiny")) as m:
		check_files(t, os.path.join(m.path, ".files"), files,
			    "hub cache repo")
	with harness.Mount(t, snap) as m:
		check_files(t, os.path.join(m.path, ".files"), files,
			    "hub cache snapshot")
	# a pipeline in the cache: a repo and its snapshot have the root's
	# .files/, its symlinks into blobs/ followed; the cache's root has
	# none (it is no model's folder)
	prepo = hubsim.Repo("org/pipe")
	psnap = hubsim.make_cache(cache, prepo, prepo.commit(pipe))
	t.check(os.path.islink(os.path.join(psnap, "unet", "config.json")),
		"hub cache: a pipeline's files are symlinks into blobs/")
	for label, src in (("repo", os.path.join(cache, "models--org--pipe")),
			   ("snapshot", psnap)):
		with harness.Mount(t, src) as m:
			check_pipeline(t, os.path.join(m.path, ".files"), pipe,
				       "hub cache pipeline %s" % label)
	with harness.Mount(t, cache) as m:
		t.check(not os.path.exists(os.path.join(m.path, ".files")),
			"hub cache root: no .files")
		check_files(t, os.path.join(m.path, "org", "pipe", "unet",
					    ".files"),
			    {k[5:]: v for k, v in pipe.items()
			     if k.startswith("unet/")},
			    "hub cache root: org/pipe/unet")


# ---- .dequant/.files/ --------------------------------------------------

def half_bits(a, dtype):
	"""The 16-bit codes of float32 values a as torch's .to(dtype)
	rounds them (nearest, ties to even)."""
	t = torch.tensor(np.ascontiguousarray(a, np.float32)).to(dtype)
	return t.view(torch.int16).numpy().view(np.uint16).ravel()


def check_plain(t, m, mnt, config, dtype):
	"""m's .dequant/.files/: its folder without quantize_config.json, its
	config without quantization_config, model.safetensors holding each
	quantized weight as its .dequant/.npy/ values in dtype ("BF16",
	"F16", "F32") and every other tensor as stored."""
	d = os.path.join(mnt, m.name)
	fd = os.path.join(d, ".dequant", ".files")
	label = "%s: .dequant/.files/" % m.name
	t.eq(sorted(os.listdir(fd)), ["config.json", "model.safetensors",
				      "tokenizer.json"], label)
	want_cfg = {k: v for k, v in config.items()
		    if k != "quantization_config"}
	want_cfg.setdefault("torch_dtype", "bfloat16")
	got, cfg = load_like_transformers(fd)
	t.eq(cfg, want_cfg, "%s: config.json without quantization_config"
	     % label)
	with open(os.path.join(fd, "model.safetensors"), "rb") as f:
		(n,) = struct.unpack("<Q", f.read(8))
		hdr = json.loads(f.read(n))
	hdr.pop("__metadata__", None)
	parts = {p for v in m.logical.values() for p in v[1]}
	t.eq(sorted(hdr), sorted((set(m.tensors) - parts - set(m.refused)) |
				  set(m.logical)),
	     "%s: the tensors, without the quantized weights' parts" % label)
	for name in sorted(hdr):
		e = hdr[name]
		if name not in m.logical:
			t.check(e["dtype"] == m.tensors[name][0] and
				got[name] == tq.stored_bytes(m, name),
				"%s: %s as stored" % (label, name))
			continue
		v = np.load(os.path.join(d, ".dequant", ".npy", name + ".npy"))
		t.eq((e["dtype"], e["shape"]), (dtype, list(v.shape)),
		     "%s: %s: dtype and shape" % (label, name))
		if dtype == "F32":
			t.check(tq.same(np.frombuffer(got[name], "<f4").reshape(
				v.shape), v), "%s: %s: the values" % (label, name))
			continue
		want = half_bits(v, torch.bfloat16 if dtype == "BF16" else
				 torch.float16)
		bits = np.frombuffer(got[name], "<u2")
		nan = np.isnan(v).ravel()
		inf = 0x7f80 if dtype == "BF16" else 0x7c00
		t.check(bits.size == nan.size and
			bool((bits[~nan] == want[~nan]).all()) and
			bool(((bits[nan] & 0x7fff) > inf).all()),
			"%s: %s: the .dequant/.npy values in %s, rounded as torch "
			"rounds (NaN a NaN)" % (label, name, dtype))


def dequant(t):
	"""FP8 blocks (config: bfloat16), GPTQ (float16, quantize_config.json
	beside) and NF4 (no torch_dtype: BF16)."""
	rng = np.random.default_rng(36)
	fp8 = tq.fp8_models(rng)[0]
	# the config's 128 x 128 does not tile this weight's [5, 4] grid
	# (int-quant takes 64 x 64 for it, without a config): refused
	fp8.logical.pop("layers.2.mlp.up_proj.weight")
	fp8.refused.append("layers.2.mlp.up_proj.weight")
	gptq = tq.gptq_models(rng)[0]
	nf4 = tq.bnb_model(rng)
	configs = {
		"fp8": ({"model_type": "deepseek_v3", "torch_dtype": "bfloat16",
			 "quantization_config": {"quant_method": "fp8",
						 "weight_block_size": [128,
								       128]}},
			"BF16"),
		"gptq": ({"model_type": "llama", "torch_dtype": "float16",
			  "quantization_config": {"quant_method": "gptq",
						  "checkpoint_format": "gptq"}},
			 "F16"),
		"bnb": ({"model_type": "llama", "quantization_config": {
			"quant_method": "bitsandbytes", "load_in_4bit": True,
			"bnb_4bit_quant_type": "nf4"}}, "BF16"),
	}
	root = harness.tmpdir("filesdq")
	for m in (fp8, gptq, nf4):
		m.config["config.json"] = configs[m.name][0]
		if m.name == "gptq":
			m.config["quantize_config.json"] = {"checkpoint_format":
							    "gptq"}
		tq.write(m, root)
		write(os.path.join(root, m.name, "tokenizer.json"), b'{"t": 1}')
	with harness.Mount(t, root) as mnt:
		for m in (fp8, gptq, nf4):
			check_plain(t, m, mnt.path, *configs[m.name])


def run(t):
	rng = random.Random(36)
	local_folder(t, rng)
	named_file(t, rng)
	tree(t, rng)
	pipe = pipeline(t, rng)
	hub_cache(t, rng, pipe)
	dequant(t)


if __name__ == "__main__":
	harness.main("int-files", run)
