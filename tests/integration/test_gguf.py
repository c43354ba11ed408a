#!/usr/bin/env python3
"""int-gguf: GGUF files (issue 23) written by tests/gguf_gen.py: every ggml
type, every metadata value type with nested arrays, odd alignments, v2 and
v3; each tensor file equals the file's bytes, each sidecar its info, and
__metadata__.json every key with its typed value.  Hostile files are
refused in one line naming the file and the field."""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess

import numpy as np

import harness
import gguf_gen
import hubsim


NODE_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")
NODE_FILES = ("package.json", "package-lock.json", "gguf_check.mjs")


def node_reader(t):
	"""@huggingface/gguf, installed once (npm ci, under a lock) from the
	committed lock file into a directory of the test's own: the build
	directory's (STFS_NODE_DIR), never the source tree; its path."""
	d = os.environ.get("STFS_NODE_DIR") or os.path.join(
		harness.tmpdir("gguf-node"), "node")
	os.makedirs(d, exist_ok=True)
	mod = os.path.join(d, "node_modules", "@huggingface", "gguf")
	with open(os.path.join(d, ".lock"), "w") as lock:
		fcntl.flock(lock, fcntl.LOCK_EX)
		for f in NODE_FILES:
			shutil.copyfile(os.path.join(NODE_SRC, f),
					os.path.join(d, f))
		if not os.path.isdir(mod):
			if shutil.which("npm") is None:
				t.fatal("npm is missing: install nodejs and npm "
					"(scripts/lib.sh)")
			r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"],
					   cwd=d, stdout=subprocess.PIPE,
					   stderr=subprocess.STDOUT,
					   stdin=subprocess.DEVNULL, timeout=300)
			if r.returncode:
				t.fatal("npm ci in %s failed:\n%s"
					% (d, r.stdout.decode()[-2000:]))
	return d


def node_parse(t, paths):
	"""{path: what @huggingface/gguf reads in it}."""
	d = node_reader(t)
	r = subprocess.run(["node", os.path.join(d, "gguf_check.mjs")] +
			   list(paths), cwd=d, stdout=subprocess.PIPE,
			   stderr=subprocess.PIPE, timeout=120)
	if r.returncode:
		t.fatal("gguf_check.mjs failed: %s" % r.stderr.decode()[-2000:])
	out = {}
	for line in r.stdout.decode().splitlines():
		j = json.loads(line)
		out[j["file"]] = j
	return out


def norm(v):
	"""Integers as JS BigInts print them (strings) and as we do (numbers,
	past 2^63 - 1 strings) compare equal."""
	if isinstance(v, dict):
		return {k: norm(x) for k, x in v.items()}
	if isinstance(v, list):
		return [norm(x) for x in v]
	if isinstance(v, bool):
		return v
	if isinstance(v, int):
		return str(v)
	if isinstance(v, str) and v.lstrip("-").isdigit():
		return v
	return v


def check_independent(t, parsed, mnt, label):
	"""The mount's sidecars and __metadata__.json agree with
	@huggingface/gguf's parse of every file of the model (parsed: its
	files' parses; a split set's metadata is its first part's)."""
	with open(os.path.join(mnt, "__metadata__.json"), "rb") as f:
		ours = json.loads(f.read().decode("utf-8"))
	first = parsed[sorted(parsed)[0]]["metadata"]
	theirs = {k: v for k, v in first.items()
		  if k not in ("version", "tensor_count", "kv_count")}
	t.eq(norm(ours), norm(theirs), "%s: __metadata__.json vs "
	     "@huggingface/gguf" % label)
	n = 0
	for path, j in sorted(parsed.items()):
		for ti in j["tensorInfos"]:
			fn = harness.encode_name(ti["name"]) + ".json"
			with open(os.path.join(mnt, fn)) as f:
				sc = json.load(f)
			t.eq((sc["gguf"]["ne"], sc["gguf"]["type_id"],
			      sc["offset"], sc["source"]),
			     ([int(x) for x in ti["shape"]], ti["dtype"],
			      int(j["tensorDataOffset"]) + int(ti["offset"]),
			      os.path.basename(path)),
			     "%s: %s sidecar vs @huggingface/gguf" % (label,
								      ti["name"]))
			n += 1
	t.eq(n, len([f for f in os.listdir(mnt) if f.endswith(".json")
		     and not f.startswith("__")]),
	     "%s: @huggingface/gguf sees every tensor" % label)


def expected_meta(meta):
	"""What __metadata__.json holds for gguf_gen metadata."""
	def conv(vt, v):
		if vt == "array":
			et, items = v
			return [conv(et, x) for x in items]
		if vt == "f32":
			return float(np.float32(v))
		if vt == "u64" and v > 2**63 - 1:
			return str(v)	# gguf.h: past 2^63 - 1 as a string
		return v
	return {k: conv(vt, v) for k, vt, v in meta}


def check_mount(t, path, tensors, offsets, meta, align, label, parsed):
	with harness.Mount(t, path) as m:
		check_independent(t, {path: parsed[path]}, m.path, label)
		names = set(os.listdir(m.path))
		for name, tname, shape, raw in tensors:
			fn = harness.encode_name(name)
			t.check(fn in names, "%s: %s listed" % (label, fn))
			with open(os.path.join(m.path, fn), "rb") as f:
				t.eq(f.read(), raw, "%s: %s bytes" % (label, name))
			with open(os.path.join(m.path, fn + ".json")) as f:
				j = json.load(f)
			t.eq((j["dtype"], j["shape"], j["nbytes"], j["offset"]),
			     (tname, list(shape), len(raw), offsets[name]),
			     "%s: %s sidecar" % (label, name))
			num, block, bb = gguf_gen.TYPES[tname]
			t.eq(j.get("gguf"), {"type": tname, "type_id": num,
					     "block_size": block,
					     "block_bytes": bb,
					     "ne": list(reversed(shape))},
			     "%s: %s sidecar's gguf fields" % (label, name))
		with open(os.path.join(m.path, "__metadata__.json"), "rb") as f:
			got = json.loads(f.read().decode("utf-8"))
		t.eq(got, expected_meta(meta), "%s: __metadata__.json" % label)
		with open(os.path.join(m.path, "__summary__.json")) as f:
			summ = json.load(f)
		t.eq((summ["format"], summ["tensors"], summ["gguf"]),
		     ("gguf", len(tensors),
		      {"architecture": "llama", "file_type": 15,
		       "quantization": "Q4_K_M", "alignment": align}),
		     "%s: __summary__.json" % label)


def check_split(t, d, tensors, meta):
	"""A split set of 3 mounts as one model, from its first part, any
	part or its directory; a missing part and a name in two parts are
	refused."""
	sd = os.path.join(d, "split")
	os.makedirs(sd)
	paths = gguf_gen.write_split(os.path.join(sd, "m"), tensors, 3,
				     metadata=meta)
	offs = {}
	for k, p in enumerate(paths):
		with open(p, "rb") as f:
			data = f.read()
		for name, tname, shape, raw in tensors:
			i = data.find(raw) if raw else -1
			if raw and i >= 0 and name not in offs:
				offs[name] = (k, i)
	parsed = node_parse(t, paths)
	for src in (paths[0], paths[2], sd):
		with harness.Mount(t, src) as m:
			check_independent(t, parsed, m.path, "split %s" % src)
			same_bytes(t, m.path, tensors, "split %s" % src)
			with open(os.path.join(m.path, "__summary__.json")) as f:
				summ = json.load(f)
			t.eq((summ["format"], summ["tensors"],
			      len(summ["shards"])), ("gguf-split", len(tensors), 3),
			     "split %s: summary" % src)
			with open(os.path.join(m.path, "__metadata__.json")) as f:
				got = json.load(f)
			t.eq(got.get("general.architecture"), "llama",
			     "split: metadata of the first part")
	os.rename(paths[1], paths[1] + ".x")
	r = harness.run([harness.STFS_INSPECT, paths[0]])
	err = r.stderr.decode("utf-8", "replace").strip()
	base = [os.path.basename(p) for p in paths]
	t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
		"part 1 of 3" in err and base[1] in err and base[2] not in err,
		"split: a missing part is named: %r" % err)
	# part 2 named, parts 1 and 3 missing: which part it is, and every
	# part missing (issue 39: only the first was named)
	os.rename(paths[0], paths[0] + ".x")
	os.rename(paths[2], paths[2] + ".x")
	os.rename(paths[1] + ".x", paths[1])
	r = harness.run([harness.STFS_INSPECT, paths[1]])
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
		(paths[1] + ": IoError: part 2 of 3 of a GGUF split set; 2 "
		 "parts cannot be opened: %s, %s" % (base[0], base[2])) in err,
		"split: part 2 of 3, both missing parts named: %r" % err)
	# its directory: no model, but which part of how many it holds
	r = harness.run([harness.STFS_INSPECT, os.path.dirname(paths[1])])
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
		("it holds %s, part 2 of 3 of a GGUF split set whose parts "
		 "%s, %s are missing" % (base[1], base[0], base[2])) in err,
		"split: a directory of part 2 alone says so: %r" % err)
	os.rename(paths[0] + ".x", paths[0])
	os.rename(paths[2] + ".x", paths[2])
	dup = os.path.join(d, "dup")
	os.makedirs(dup)
	p2 = gguf_gen.write_split(os.path.join(dup, "m"), tensors[:2] +
				  tensors[:1], 3)
	r = harness.run([harness.STFS_INSPECT, p2[0]])
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and "also in" in err and
		len(err.splitlines()) == 1,
		"split: a tensor in two parts is refused: %r" % err)


def same_bytes(t, d, tensors, label):
	"""Each tensor file in directory d holds the tensor's bytes."""
	for name, _, _, raw in tensors:
		with open(os.path.join(d, harness.encode_name(name)), "rb") as f:
			t.eq(f.read(), raw, "%s: %s bytes" % (label, name))


def inspect_refuses(t, src, words, label, env=None):
	"""stfs-inspect SRC fails in one line naming SRC, holding words."""
	r = harness.run([harness.STFS_INSPECT, src], env=env)
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
		src in err and all(w in err.replace(src, "") for w in words),
		"%s: one line naming %s with %s, got %r" % (label, src, words, err))


def ollama_store(om, models):
	"""An Ollama store at om: models {(namespace, model, tag): [paths of
	its model layers' files]}; each file becomes blobs/sha256-HEX."""
	os.makedirs(os.path.join(om, "blobs"), exist_ok=True)
	for (ns, model, tag), files in models.items():
		layers = [{"mediaType": "application/vnd.ollama.image.template",
			   "digest": "sha256:" + "1" * 64}]
		for p in files:
			with open(p, "rb") as f:
				hexd = hashlib.sha256(f.read()).hexdigest()
			shutil.copy(p, os.path.join(om, "blobs", "sha256-" + hexd))
			layers.append({"mediaType": "application/vnd.ollama."
				       "image.model", "digest": "sha256:" + hexd})
		md = os.path.join(om, "manifests", "registry.ollama.ai", ns, model)
		os.makedirs(md, exist_ok=True)
		with open(os.path.join(md, tag), "w") as f:
			json.dump({"schemaVersion": 2, "layers": layers}, f)


def check_lone_parts(t, d, tensors, meta):
	"""A part of a split set not named as one (renamed, an Ollama blob) is
	never a model alone: it is refused in one line saying which part it
	is and how to mount the set; an Ollama manifest whose model layers
	are the set's parts (in any order) mounts the whole set."""
	ld = os.path.join(d, "lone")
	os.makedirs(ld)
	paths = gguf_gen.write_split(os.path.join(ld, "s"), tensors, 3,
				     metadata=meta)
	for k in (0, 1):
		p = os.path.join(ld, "renamed-%d.gguf" % k)
		shutil.copy(paths[k], p)
		inspect_refuses(t, p, ["InvalidGguf", "part %d of 3" % (k + 1),
				       "NAME-00001-of-00003.gguf",
				       "llama-gguf-split --merge"],
				"renamed part %d" % (k + 1))
	alone = os.path.join(ld, "dir")
	os.makedirs(alone)
	shutil.copy(paths[1], os.path.join(alone, "model.gguf"))
	refuse_mount(t, os.path.join(ld, "renamed-0.gguf"),
		     ["InvalidGguf", "part 1 of 3"])
	refuse_mount(t, alone, ["InvalidGguf", "part 2 of 3"])
	# named as parts, but not these: a whole model, a part of a set of 3
	# named as one of 2.  The message counted parts from 0 ("do not say
	# part 0 of 2 as its name does") and said neither what nor how.
	named = os.path.join(ld, "named")
	os.makedirs(named)
	for k in (1, 2):
		shutil.copy(paths[k - 1],
			    os.path.join(named, "x-%05d-of-00002.gguf" % k))
	whole = os.path.join(ld, "whole")
	os.makedirs(whole)
	gguf_gen.write(os.path.join(whole, "w-00001-of-00002.gguf"),
		       [("a", "F32", [4], None)])
	shutil.copy(os.path.join(whole, "w-00001-of-00002.gguf"),
		    os.path.join(whole, "w-00002-of-00002.gguf"))
	for p, words in (
			(os.path.join(whole, "w-00001-of-00002.gguf"),
			 ["its name says part 1 of 2", "split.no absent and "
			  "split.count absent", "a whole model",
			  "no -KKKKK-of-NNNNN in its name"]),
			(os.path.join(named, "x-00001-of-00002.gguf"),
			 ["its name says part 1 of 2", "split.no 0 and "
			  "split.count 3", "rename it"])):
		inspect_refuses(t, p, ["InvalidGguf"] + words,
				os.path.basename(p))

	om = os.path.join(d, "ollama-split")
	ollama_store(om, {("library", "big", "latest"):
			  [paths[2], paths[0], paths[1]]})
	env = dict(os.environ, OLLAMA_MODELS=om)
	for src, sub in ((om, "big:latest"), ("ollama:big", "")):
		with harness.Mount(t, src, env=env) as m:
			same_bytes(t, os.path.join(m.path, sub), tensors,
				   "ollama split %s" % src)
			with open(os.path.join(m.path, sub,
					       "__summary__.json")) as f:
				summ = json.load(f)
			t.eq((summ["format"], summ["tensors"],
			      len(summ["shards"])),
			     ("gguf-split", len(tensors), 3),
			     "ollama split %s: the set" % src)
	# a manifest with one part of a set, and one with two of three
	bad = os.path.join(d, "ollama-bad")
	ollama_store(bad, {("library", "one", "latest"): [paths[2]],
			   ("library", "two", "latest"): paths[:2]})
	env = dict(os.environ, OLLAMA_MODELS=bad)
	for src, words in (("ollama:one", ["part 3 of 3"]),
			   ("ollama:two", ["one part of the 2 listed"])):
		r = harness.run([harness.STFS_INSPECT, src], env=env)
		err = r.stderr.decode("utf-8", "replace").strip()
		t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
			os.path.join(bad, "blobs", "sha256-") in err and
			"InvalidGguf" in err and all(w in err for w in words),
			"%s: one line naming the blob with %s: %r"
			% (src, words, err))


def check_stores(t, d, tensors):
	"""A hub cache with a GGUF-only repo and an Ollama store mount as trees
	of models: ORG/NAME/ and MODEL:TAG/."""
	rng = np.random.default_rng(5)
	few = tensors[:4]
	hub = os.path.join(d, "hub")
	repo = os.path.join(hub, "models--org--tiny-GGUF")
	commit = "0123456789abcdef0123456789abcdef01234567"
	snap = os.path.join(repo, "snapshots", commit)
	os.makedirs(snap)
	os.makedirs(os.path.join(repo, "blobs"))
	os.makedirs(os.path.join(repo, "refs"))
	with open(os.path.join(repo, "refs", "main"), "w") as f:
		f.write(commit)
	blob = os.path.join(repo, "blobs", "a" * 64)
	gguf_gen.write(blob, few, metadata=[("general.architecture", "str",
					     "qwen2")], rng=rng)
	os.symlink(os.path.join("..", "..", "blobs", "a" * 64),
		   os.path.join(snap, "tiny-Q4_K_M.gguf"))

	om = os.path.join(d, "ollama")
	os.makedirs(os.path.join(om, "blobs"))
	models = {"llama3:8b": ("registry.ollama.ai", "library", "llama3", "8b"),
		  "me/tiny:latest": ("registry.ollama.ai", "me", "tiny",
				     "latest"),
		  "hf.co/org/x:Q4_K_M": ("hf.co", "org", "x", "Q4_K_M")}
	for i, (name, parts) in enumerate(sorted(models.items())):
		hexd = ("%x" % (i + 10)) * 64
		gguf_gen.write(os.path.join(om, "blobs", "sha256-" + hexd[:64]),
			       few, metadata=[("general.name", "str", name)],
			       rng=rng)
		md = os.path.join(om, "manifests", *parts[:3])
		os.makedirs(md, exist_ok=True)
		man = {"schemaVersion": 2, "config": {"digest": "sha256:" + "0" * 64},
		       "layers": [{"mediaType": "application/vnd.ollama.image."
				   "template", "digest": "sha256:" + "1" * 64},
				  {"mediaType": "application/vnd.ollama.image."
				   "model", "digest": "sha256:" + hexd[:64]}]}
		with open(os.path.join(md, parts[3]), "w") as f:
			json.dump(man, f)
	with open(os.path.join(om, "manifests", "registry.ollama.ai",
			       "library", "llama3", "nomodel"), "w") as f:
		json.dump({"layers": []}, f)

	def tree_ok(src, dirs, label):
		with harness.Mount(t, src) as m:
			for sub in dirs:
				same_bytes(t, os.path.join(m.path, sub), few,
					   "%s: %s" % (label, sub))
			with open(os.path.join(m.path, dirs[0],
					       "__summary__.json")) as f:
				t.eq(json.load(f)["format"], "gguf",
				     "%s: summary format" % label)
	tree_ok(hub, ["org/tiny-GGUF"], "hub cache")
	tree_ok(om, ["llama3:8b", "me/tiny:latest", "hf.co/org/x:Q4_K_M"],
		"ollama")
	with harness.Mount(t, om) as m:
		t.eq(sorted(f for f in os.listdir(m.path) if f[:2] != "__"),
		     ["hf.co", "llama3:8b", "me"],
		     "ollama: the store's top level")
	env = dict(os.environ, OLLAMA_MODELS=om)
	with harness.Mount(t, "ollama:", env=env) as m:
		t.check(os.path.isdir(os.path.join(m.path, "llama3:8b")),
			"ollama: names the store of $OLLAMA_MODELS")
	for src, want in (("ollama:llama3:8b", "llama3:8b"),
			  ("ollama:me/tiny", "me/tiny:latest")):
		with harness.Mount(t, src, env=env) as m:
			with open(os.path.join(m.path, "__metadata__.json")) as f:
				t.eq(json.load(f).get("general.name"), want,
				     "%s: that model alone" % src)
	r = harness.run([harness.STFS_INSPECT, "ollama:nosuch"], env=env)
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and "no model nosuch:latest" in err and
		len(err.splitlines()) == 1, "ollama:nosuch is refused: %r" % err)


def check_hub(t, d, tensors):
	"""A GGUF repo of the Hub look-alike (hf://): one directory per
	quantization file, a split set as one model, a README ignored."""
	rng = np.random.default_rng(9)
	few = tensors[:3]
	files = {}
	for q in ("Q4_K_M", "Q8_0"):
		p = os.path.join(d, "hub-%s.gguf" % q)
		gguf_gen.write(p, few, metadata=[("general.name", "str", q)],
			       rng=rng)
		with open(p, "rb") as f:
			files["tiny-%s.gguf" % q] = f.read()
	for p in gguf_gen.write_split(os.path.join(d, "big"), few, 2, rng=rng):
		with open(p, "rb") as f:
			files["split/" + os.path.basename(p)] = f.read()
	files["README.md"] = b"# tiny"
	sim = hubsim.HubSim(tokens=("hf_gguf",), ttl=60.0, small=4096)
	sim.start()
	try:
		sim.add_repo("org/tiny-GGUF").commit(files)
		home = os.path.join(d, "hfhome")
		os.makedirs(home, exist_ok=True)
		env = {k: v for k, v in os.environ.items()
		       if not k.startswith(("HF_", "HUGGING", "STFS_HTTP_"))}
		env.update(HF_HOME=home, HF_ENDPOINT=sim.endpoint,
			   HF_TOKEN="hf_gguf")
		with harness.Mount(t, "hf://org/tiny-GGUF", env=env) as m:
			t.eq(sorted(f for f in os.listdir(m.path) if f[:2] != "__"),
			     ["split", "tiny-Q4_K_M", "tiny-Q8_0"],
			     "hf://: one directory per GGUF model")
			for sub in ("tiny-Q4_K_M", "tiny-Q8_0", "split"):
				same_bytes(t, os.path.join(m.path, sub), few,
					   "hf://: %s" % sub)
	finally:
		sim.stop()


def every_type(rng):
	out = []
	for tname, (_, block, _) in gguf_gen.TYPES.items():
		shape = [3, 2, 2 * block] if block > 1 else [2, 3, 5]
		raw = gguf_gen.random_bytes(tname, shape, rng)
		out.append(("blk.0.%s.weight" % tname.lower(), tname, shape, raw))
	out.append(("scalar", "F32", [], b"\0\0\x80\x3f"))
	out.append(("empty", "F16", [0, 4], b""))
	return out


def run(t):
	d = harness.tmpdir("gguf")
	rng = np.random.default_rng(23)
	tensors = every_type(rng)
	meta = gguf_gen.every_value_type()
	node_reader(t)
	files = []
	for version, align in ((3, 32), (2, 8), (3, 64), (3, 4096)):
		p = os.path.join(d, "every-v%d-a%d.gguf" % (version, align))
		offs = gguf_gen.write(p, tensors, alignment=align,
				      metadata=meta, version=version)
		files.append((p, offs, version, align))
	parsed = node_parse(t, [f[0] for f in files])
	for p, offs, version, align in files:
		m = list(meta)
		if align != 32:
			m.append(("general.alignment", "u32", align))
		check_mount(t, p, tensors, offs, m, align, os.path.basename(p),
			    parsed)

	check_split(t, d, tensors, meta)
	check_lone_parts(t, d, tensors, meta)
	check_stores(t, d, tensors)
	check_hub(t, d, tensors)

	ok = os.path.join(d, "ok.gguf")
	gguf_gen.write(ok, [("a", "Q8_0", [2, 32], None),
			    ("b", "F32", [4], None)],
		       metadata=[("k", "str", "v")])
	with open(ok, "rb") as f:
		good = f.read()
	# an empty first string (fuzz_gguf's first finding): a valid file
	p = os.path.join(d, "empty-key.gguf")
	gguf_gen.write(p, [("e", "I8", [0], b"")],
		       metadata=[("", "str", ""), ("k", "array", ("str", [""]))])
	with harness.Mount(t, p) as m:
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			t.eq(json.load(f), {"": "", "k": [""]},
			     "empty key and strings")
	check_nul_keys(t, d)
	check_float_meta(t, d)
	for name, data, words in gguf_gen.hostile_files(good):
		p = os.path.join(d, "bad-%s.gguf" % name)
		with open(p, "wb") as f:
			f.write(data)
		r = harness.run([harness.STFS_INSPECT, p])
		err = r.stderr.decode("utf-8", "replace").strip()
		t.check(r.returncode != 0, "%s: refused" % name)
		# the words in the message, not in the file's name
		t.check(len(err.splitlines()) == 1 and p in err and
			all(w in err.replace(p, "") for w in words),
			lambda: "%s: one line naming the file and %s, got %r"
			% (name, words, err))
	# a damaged magic is GGUF's to report when the name says .gguf or
	# the bytes after it read as a GGUF version and tensor count; other
	# files are the reader's their name says (a .bin: PyTorch's), else
	# safetensors' (the reference's error)
	bad = b"GGUX" + good[4:]
	for name, data, code in (("damaged.bin", bad, "InvalidGguf"),
				 ("noversion.bin", b"GGUX" + b"\0" * 60,
				  "InvalidCheckpoint: not a PyTorch checkpoint"),
				 ("noversion.dat", b"GGUX" + b"\0" * 60,
				  "HeaderTooLarge: the header length"),
				 ("noversion.gguf", b"GGUX" + b"\0" * 60,
				  "InvalidGguf")):
		p = os.path.join(d, name)
		with open(p, "wb") as f:
			f.write(data)
		r = harness.run([harness.STFS_INSPECT, p])
		err = r.stderr.decode("utf-8", "replace").strip()
		t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
			code in err, "%s: %s, got %r" % (name, code, err))
	# a file of 1 to 4 bytes or of text named .gguf leads with GGUF
	# (issue 39), and says what to give: the .gguf file, not a
	# safetensors one
	for name, data, words in (
			("one.gguf", b"G", ["not a GGUF file: a file of 1 byte,"]),
			("four.gguf", b"GGUF", ["not a GGUF file: a file of 4 "
						"bytes,", "interrupted download"]),
			("card.gguf", b"# Model card\nThis model is ...\n",
			 ["not a GGUF file: a text file", "`# Model card`",
			  "give the .gguf file itself"])):
		p = os.path.join(d, name)
		with open(p, "wb") as f:
			f.write(data)
		r = harness.run([harness.STFS_INSPECT, p])
		err = r.stderr.decode("utf-8", "replace").strip()
		t.check(r.returncode == 1 and len(err.splitlines()) == 1 and
			("%s: InvalidGguf: not a GGUF file: " % p) in err and
			all(w in err for w in words) and
			".safetensors" not in err,
			"%s: leads with GGUF, says %s, got %r" % (name, words, err))
	refuse_mount(t, os.path.join(d, "bad-magic.gguf"),
		     ["InvalidGguf", 'magic is "GGUX"'])


def check_float_meta(t, d):
	"""Floats of metadata stay floats in JSON: -0.0 keeps its sign (it
	was written -0, which readers take for the integer 0) and 3.0 is not
	the integer 3; values read back exactly."""
	import math
	p = os.path.join(d, "floats.gguf")
	gguf_gen.write(p, [("w", "F32", [4], None)], metadata=[
		("a", "f32", -0.0), ("b", "f64", -0.0), ("c", "f32", 3.0),
		("d", "f64", 1e300), ("e", "f32", 0.1),
		("f", "array", ("f64", [-0.0, 2.0, 0.5]))])
	r = harness.run([harness.STFS_INSPECT, "--json", p])
	with harness.Mount(t, p) as m:
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			text = f.read()
	meta = json.loads(text)
	for k in ("a", "b"):
		t.check(isinstance(meta.get(k), float) and meta[k] == 0 and
			math.copysign(1, meta[k]) < 0, "metadata %s: -0.0, got %r "
			"in %r" % (k, meta.get(k), text))
	t.check(isinstance(meta.get("c"), float) and meta["c"] == 3.0,
		"metadata c: 3.0 a float: %r" % meta.get("c"))
	t.eq(meta.get("d"), 1e300, "metadata d: f64 exact")
	t.eq(np.float32(meta.get("e", 0)), np.float32(0.1),
	     "metadata e: reads back as the f32")
	f = meta.get("f") or [0]
	t.check([type(x) for x in f] == [float] * 3 and
		math.copysign(1, f[0]) < 0, "metadata f: floats: %r" % f)
	j = json.loads(r.stdout or b"{}").get("metadata", {})
	t.check(math.copysign(1, j.get("a", 1)) < 0,
		"--json: -0.0 keeps its sign: %r" % j.get("a"))


def check_nul_keys(t, d):
	"""NUL bytes in metadata keys and strings, which GGUF allows: JSON
	writes them (\\u0000), jansson will not read one back in a key.
	stfs-inspect --json said "out of memory", the text listed no
	metadata at all, a string array holding one vanished from the
	summary, and --diff saw no key.  Every place keeps every key."""
	meta = {"a\0b": "v\0x", "general.architecture": "ll\0ama",
		"arr": ["p\0q"]}
	paths = []
	for name, key in (("nul-a.gguf", "a\0b"), ("nul-b.gguf", "a\0c")):
		p = os.path.join(d, name)
		gguf_gen.write(p, [("w", "F32", [4], None)], metadata=[
			(key, "str", "v\0x"),
			("general.architecture", "str", "ll\0ama"),
			("arr", "array", ("str", ["p\0q"]))])
		paths.append(p)
	r = harness.run([harness.STFS_INSPECT, "--json", paths[0]])
	t.eq((r.returncode, r.stderr), (0, b""), "--json of NUL keys")
	j = json.loads(r.stdout or b"{}")
	t.eq(j.get("metadata"), meta, "--json: the metadata, NULs kept")
	t.eq((j.get("gguf") or {}).get("architecture"), "ll\0ama",
	     "--json: the architecture, NUL kept")
	r = harness.run([harness.STFS_INSPECT, paths[0]])
	out = r.stdout.decode("utf-8", "replace")
	for line in ('  "a\\u0000b": "v\\u0000x"\n',
		     '  general.architecture: "ll\\u0000ama"\n',
		     '  arr: ["p\\u0000q"]\n',
		     'gguf:        architecture "ll\\u0000ama", '):
		t.check(r.returncode == 0 and line in out,
			"text: the line %r, NUL escaped, in %r" % (line, out))
	r = harness.run([harness.STFS_INSPECT, "--diff", "--json"] + paths)
	t.eq(json.loads(r.stdout or b"{}").get("metadata"),
	     {"only_in_a": ["a\0b"], "only_in_b": ["a\0c"], "changed": []},
	     "--diff --json: the keys that differ after their NUL")
	r = harness.run([harness.STFS_INSPECT, "--diff"] + paths)
	t.check(r.returncode == 1 and b'metadata only in A: "a\\u0000b"\n'
		in r.stdout, "--diff: the key named, NUL escaped: %r"
		% r.stdout)
	with harness.Mount(t, paths[0]) as m:
		with open(os.path.join(m.path, "__summary__.json")) as f:
			summ = json.load(f)
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			t.eq(json.load(f), meta, "__metadata__.json, NULs kept")
		t.eq(summ.get("metadata"), meta, "__summary__.json's metadata")
	t.eq(summ, j, "__summary__.json is what --json prints")


def refuse_mount(t, src, words, env=None):
	"""stfs SOURCE MNT refuses in one line holding words, mounting
	nothing."""
	mnt = harness.tmpdir("gguf-mnt")
	try:
		r = harness.run([harness.STFS, src, mnt], timeout=60, env=env)
		err = r.stderr.decode("utf-8", "replace").strip()
		t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
			all(w in err for w in words),
			"stfs %s: one line with %s, got %r" % (src, words, err))
		t.check(not harness.is_mounted(mnt),
			"stfs %s: nothing mounted" % src)
	finally:
		harness.force_unmount(mnt)


if __name__ == "__main__":
	harness.main("gguf", run)
