#!/usr/bin/env python3
"""gen_sharded.py - sharded safetensors sets for the tests.

Writes shards named like huggingface_hub does (model-00001-of-00003.safetensors)
and a model.safetensors.index.json ({"metadata": {"total_size": ...},
"weight_map": {tensor: shard}}), using gen.py's reference-style writer.

Library:
    write_sharded(outdir, tensors, nshards, metadata=None, shard_metadata=...)
    bloom560m_tensors()        exact bloom-560m shapes, F16 (559,214,592 params)
    mixed_tensors(n, seed)     n small tensors of mixed dtypes
    broken_sets(outdir)        one refused set per index rule -> {name: dir}

CLI:
    gen_sharded.py bloom OUTDIR         bloom-560m-shaped set in 3 shards
    gen_sharded.py mixed OUTDIR N S     N tensors in S shards
    gen_sharded.py broken OUTDIR
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


def shard_name(i, n):
	return "model-%05d-of-%05d.safetensors" % (i + 1, n)


def split(tensors, nshards):
	"""Contiguous split of [(name, dtype, shape, data)] by bytes."""
	sizes = [gen.nbytes_of(t[1], t[2]) for t in tensors]
	total = sum(sizes) or 1
	groups = [[] for _ in range(nshards)]
	acc = 0
	for t, s in zip(tensors, sizes):
		k = min(nshards - 1, acc * nshards // total)
		groups[k].append(t)
		acc += s
	# no empty shard: steal from the fullest neighbour
	for k in range(nshards):
		if not groups[k]:
			donor = max(range(nshards), key=lambda j: len(groups[j]))
			groups[k].append(groups[donor].pop())
	return groups


def write_sharded(outdir, tensors, nshards, metadata=None,
		  shard_metadata=None, index_name="model.safetensors.index.json"):
	"""Write nshards shards and the index; returns (index_path, weight_map)."""
	os.makedirs(outdir, exist_ok=True)
	groups = split(list(tensors), nshards)
	weight_map = {}
	total = 0
	for i, group in enumerate(groups):
		name = shard_name(i, nshards)
		gen.write_safetensors(os.path.join(outdir, name), group,
				      shard_metadata if shard_metadata is not None
				      else {"format": "pt"})
		for t in group:
			weight_map[t[0]] = name
			total += gen.nbytes_of(t[1], t[2])
	meta = {"total_size": total}
	meta.update(metadata or {})
	index = {"metadata": meta, "weight_map": dict(sorted(weight_map.items()))}
	path = os.path.join(outdir, index_name)
	with open(path, "w") as f:
		json.dump(index, f, indent=2)
	return path, weight_map


def _bulk(seed, n):
	return lambda: gen.bulk_bytes(seed, n)


def bloom560m_tensors():
	h, layers, vocab = 1024, 24, 250880
	shapes = [("word_embeddings.weight", [vocab, h]),
		  ("word_embeddings_layernorm.weight", [h]),
		  ("word_embeddings_layernorm.bias", [h])]
	for i in range(layers):
		p = "h.%d." % i
		shapes += [
			(p + "input_layernorm.weight", [h]),
			(p + "input_layernorm.bias", [h]),
			(p + "self_attention.query_key_value.weight", [3 * h, h]),
			(p + "self_attention.query_key_value.bias", [3 * h]),
			(p + "self_attention.dense.weight", [h, h]),
			(p + "self_attention.dense.bias", [h]),
			(p + "post_attention_layernorm.weight", [h]),
			(p + "post_attention_layernorm.bias", [h]),
			(p + "mlp.dense_h_to_4h.weight", [4 * h, h]),
			(p + "mlp.dense_h_to_4h.bias", [4 * h]),
			(p + "mlp.dense_4h_to_h.weight", [h, 4 * h]),
			(p + "mlp.dense_4h_to_h.bias", [h]),
		]
	shapes += [("ln_f.weight", [h]), ("ln_f.bias", [h])]
	return [(n, "F16", s, _bulk(k, gen.nbytes_of("F16", s)))
		for k, (n, s) in enumerate(shapes)]


MIXED = ["F32", "F16", "BF16", "I64", "U8", "BOOL", "F8_E4M3", "I32", "F64"]


def mixed_tensors(n, seed=7):
	out = []
	for i in range(n):
		dtype = MIXED[(i * 7 + seed) % len(MIXED)]
		shape = [1 + (i * 13) % 5, 1 + (i * 3) % 7]
		name = "model.layers.%d.block.%s.weight" % (i // 4, i % 4)
		out.append((name, dtype, shape,
			    gen.filler(dtype, shape, seed * 100003 + i)))
	return out


def broken_sets(outdir):
	"""One broken set per rule: {case: (index path, words the error names)}."""
	cases = {}

	def fresh(case, n=6, shards=2):
		d = os.path.join(outdir, case)
		idx, wm = write_sharded(d, mixed_tensors(n), shards)
		with open(idx) as f:
			return d, idx, json.load(f)

	def save(idx, obj):
		with open(idx, "w") as f:
			json.dump(obj, f, indent=2)

	d, idx, obj = fresh("missing-shard")
	os.unlink(os.path.join(d, shard_name(1, 2)))
	cases["missing-shard"] = (idx, [shard_name(1, 2)])

	d, idx, obj = fresh("unlisted-tensor")
	victim = sorted(obj["weight_map"])[0]
	del obj["weight_map"][victim]
	save(idx, obj)
	cases["unlisted-tensor"] = (idx, [victim, "not in the weight_map"])

	d, idx, obj = fresh("absent-tensor")
	obj["weight_map"]["model.ghost.weight"] = shard_name(0, 2)
	save(idx, obj)
	cases["absent-tensor"] = (idx, ["model.ghost.weight", shard_name(0, 2)])

	d, idx, obj = fresh("wrong-shard")
	victim = sorted(obj["weight_map"])[0]
	other = [s for s in (shard_name(0, 2), shard_name(1, 2))
		 if s != obj["weight_map"][victim]][0]
	obj["weight_map"][victim] = other
	save(idx, obj)
	cases["wrong-shard"] = (idx, [victim])

	# the same tensor in two shards: write shard 2 again with an extra copy
	d = os.path.join(outdir, "two-shards")
	ts = mixed_tensors(4)
	idx, wm = write_sharded(d, ts, 2)
	dup = ts[0]
	held = wm[dup[0]]
	other = [s for s in (shard_name(0, 2), shard_name(1, 2)) if s != held][0]
	group = [t for t in ts if wm[t[0]] == other] + [dup]
	gen.write_safetensors(os.path.join(d, other), group, {"format": "pt"})
	cases["two-shards"] = (idx, [dup[0], "two shards"])

	d, idx, obj = fresh("dotdot")
	obj["weight_map"][sorted(obj["weight_map"])[0]] = "../evil.safetensors"
	save(idx, obj)
	cases["dotdot"] = (idx, ["../evil.safetensors"])

	d, idx, obj = fresh("absolute")
	obj["weight_map"][sorted(obj["weight_map"])[0]] = "/etc/x.safetensors"
	save(idx, obj)
	cases["absolute"] = (idx, ["/etc/x.safetensors"])

	# symlinks are followed wherever they point (the hub cache's blobs/),
	# but the target must be a regular file
	d, idx, obj = fresh("symlink-not-regular")
	os.unlink(os.path.join(d, shard_name(1, 2)))
	os.symlink("/dev/null", os.path.join(d, shard_name(1, 2)))
	cases["symlink-not-regular"] = (idx, [shard_name(1, 2), "regular file"])

	d, idx, obj = fresh("not-json")
	with open(idx, "w") as f:
		f.write('{"metadata": {}, "weight_map": {')
	cases["not-json"] = (idx, ["JSON"])

	d, idx, obj = fresh("no-weight-map")
	save(idx, {"metadata": {}})
	cases["no-weight-map"] = (idx, ["weight_map"])

	d, idx, obj = fresh("bad-shard")
	with open(os.path.join(d, shard_name(0, 2)), "r+b") as f:
		f.truncate(os.path.getsize(f.name) - 1)
	cases["bad-shard"] = (idx, [shard_name(0, 2), "MetadataIncompleteBuffer"])
	return cases


def main(argv):
	if len(argv) >= 2 and argv[0] == "bloom":
		write_sharded(argv[1], bloom560m_tensors(), 3)
	elif len(argv) == 4 and argv[0] == "mixed":
		write_sharded(argv[1], mixed_tensors(int(argv[2])), int(argv[3]))
	elif len(argv) == 2 and argv[0] == "broken":
		for case, (idx, words) in sorted(broken_sets(argv[1]).items()):
			print(case, idx, *words, sep="\t")
	else:
		sys.stderr.write(__doc__)
		return 2
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
