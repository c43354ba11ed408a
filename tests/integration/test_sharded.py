#!/usr/bin/env python3
"""int-sharded: sharded sets (model.safetensors.index.json) mount as one
tree; every tensor equals its shard's slice; broken sets are refused with
nothing mounted."""

import json
import os
import time

import harness
import gen_sharded


def shard_files(idx):
	"""{shard name: harness.SrcFile} read independently of stfs."""
	with open(idx) as f:
		wm = json.load(f)["weight_map"]
	d = os.path.dirname(idx)
	return {s: harness.SrcFile(os.path.join(d, s)) for s in sorted(set(wm.values()))}


def verify_sharded(t, idx, mnt, big=False, label="set"):
	shards = shard_files(idx)
	with open(idx) as f:
		index = json.load(f)
	want = {"__metadata__.json", "__summary__.json", "__shards__"}
	total = 0
	params = {}
	for sname, S in shards.items():
		for x in S.tensors:
			f = harness.encode_name(x.name)
			want |= {f, f + ".json"}
			total += 1
			params[x.dtype] = params.get(x.dtype, 0) + x.numel
	listing = set(os.listdir(mnt))
	t.check(listing == want, lambda: "%s: listing differs: missing %s, "
		"unexpected %s" % (label, harness.short(sorted(want - listing)),
				   harness.short(sorted(listing - want))))
	for sname, S in shards.items():
		for x in S.tensors:
			p = os.path.join(mnt, harness.encode_name(x.name))
			lab = "%s: %s" % (label, x.name)
			t.eq(os.stat(p).st_size, x.nbytes, lab + " size")
			if big:
				t.eq(harness.sha256_file(p),
				     harness.sha256_file(S.path, x.offset, x.nbytes),
				     lab + " sha256")
			else:
				with open(p, "rb") as fh:
					t.check(fh.read() == S.read(x), lab + " bytes")
				harness.verify_preads(t, p, S, x, lab)
			harness.verify_sidecar(t, p + ".json", x, sname, lab)
	# root files: the index's metadata, the summed summary, the shards
	with open(os.path.join(mnt, "__metadata__.json")) as f:
		t.eq(json.load(f), index.get("metadata", {}), label + " __metadata__.json")
	with open(os.path.join(mnt, "__summary__.json")) as f:
		summ = json.load(f)
	t.eq(summ.get("tensors"), total, label + " summary tensors")
	t.eq(summ.get("parameters"), params, label + " summary parameters")
	t.eq([s.get("name") for s in summ.get("shards", [])], sorted(shards),
	     label + " summary shards")
	t.eq(sorted(os.listdir(os.path.join(mnt, "__shards__"))),
	     sorted(s + ".json" for s in shards), label + " __shards__/ listing")
	for sname, S in shards.items():
		with open(os.path.join(mnt, "__shards__", sname + ".json")) as f:
			j = json.load(f)
		t.eq(j.get("metadata"), S.metadata or {}, "%s: __shards__/%s metadata"
		     % (label, sname))
		t.eq(j.get("tensors"), len(S.tensors), "%s: __shards__/%s tensors"
		     % (label, sname))
	ij, r = harness.inspect_json(idx)
	if t.check(ij is not None, label + ": stfs-inspect --json exits 0"):
		t.eq(summ, dict(ij, source=summ.get("source")),
		     label + ": __summary__.json equals stfs-inspect --json")
	return summ


def run(t):
	d = harness.tmpdir("sharded")

	# two shards, mixed dtypes: every byte, every pread, every sidecar
	idx, _ = gen_sharded.write_sharded(os.path.join(d, "two"),
					   gen_sharded.mixed_tensors(40), 2)
	with harness.Mount(t, idx) as m:
		verify_sharded(t, idx, m.path, label="two")
		for x in shard_files(idx)[gen_sharded.shard_name(0, 2)].tensors[:3]:
			harness.verify_shell(t, os.path.join(m.path, harness.encode_name(x.name)),
					     shard_files(idx)[gen_sharded.shard_name(0, 2)],
					     x, "two: " + x.name, False)

	# 100 shards: scale of the mount and of the fd table
	idx100, _ = gen_sharded.write_sharded(os.path.join(d, "hundred"),
					      gen_sharded.mixed_tensors(3000), 100)
	t0 = time.monotonic()
	with harness.Mount(t, idx100) as m:
		t.note("100 shards / 3000 tensors: mounted and listed in %.2f s"
		       % (time.monotonic() - t0))
		verify_sharded(t, idx100, m.path, label="hundred")

	# bloom-560m-shaped set in 3 shards, from the index and from the dir
	bloom = os.path.join(d, "bloom")
	idxb, _ = gen_sharded.write_sharded(bloom, gen_sharded.bloom560m_tensors(), 3)
	for src in (idxb, bloom):
		with harness.Mount(t, src) as m:
			summ = verify_sharded(t, idxb, m.path, big=True,
					      label="bloom(%s)" % os.path.basename(src))
			t.eq(summ.get("parameters"), {"F16": 559214592},
			     "bloom: F16 parameters as on the Hub")
	r = harness.run([harness.STFS_INSPECT, "--json", bloom])
	t.eq(r.returncode, 0, "stfs-inspect DIR exits 0")
	if r.returncode == 0:
		t.eq(json.loads(r.stdout)["parameters"], {"F16": 559214592},
		     "stfs-inspect DIR: bloom parameters")
	harness.rmtree_safe(bloom)

	# broken sets: refused by stfs and stfs-inspect, nothing mounted
	cases = gen_sharded.broken_sets(os.path.join(d, "broken"))
	mnt = harness.tmpdir("mnt")
	for case, (bidx, words) in sorted(cases.items()):
		r = harness.run([harness.STFS, bidx, mnt], timeout=30)
		err = r.stderr.decode("utf-8", "replace")
		t.check(r.returncode != 0, "%s: stfs exits non-zero" % case)
		t.check(not harness.is_mounted(mnt), "%s: nothing mounted" % case)
		if harness.is_mounted(mnt):
			harness.force_unmount(mnt)
		t.eq(len(err.strip().splitlines()), 1, "%s: one line of error: %r"
		     % (case, err))
		for w in words:
			t.check(w in err, "%s: error names %r: %r" % (case, w, err))
		r = harness.run([harness.STFS_INSPECT, bidx], timeout=30)
		t.check(r.returncode in (1, 2), "%s: stfs-inspect exits 1 or 2, got %d"
			% (case, r.returncode))


harness.main("int-sharded", run)
