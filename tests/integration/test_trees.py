#!/usr/bin/env python3
"""int-trees: models where they live (issue 12).

Fixtures (tests/gen_trees.py, written here): a Hugging Face hub cache with
blobs/, relative snapshot symlinks and refs/main (a sharded model, a
single-file model with two revisions, a diffusers pipeline, a model without
an organisation, an .h5-only repo, a dataset repo, .locks/), a pipeline
directory outside the cache, a folder of LoRA-like files with awkward
names.  stfs-inspect finds exactly the expected models in each (several
SOURCEs at once too); every tensor read through a mount equals its source
bytes.
"""

import json
import os
import subprocess
import sys

import harness
from harness import STFS_INSPECT, run

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_trees  # noqa: E402


def expected_summary(files):
	"""tensors and parameters of a model made of files, parsed here."""
	n, params = 0, {}
	for p in files:
		S = harness.SrcFile(p)
		n += len(S.tensors)
		for k, v in S.parameters().items():
			params[k] = params.get(k, 0) + v
	return n, params


def check_inspect(t, src, exp, what):
	r = run([STFS_INSPECT, "--json", src])
	t.eq(r.returncode, 0, "%s: stfs-inspect --json exits 0 (%r)"
	     % (what, r.stderr[:300]))
	if r.returncode:
		return
	j = json.loads(r.stdout.decode("utf-8"))
	models = j["models"] if "models" in j else [dict(j, dir="")]
	got = {m["dir"]: m for m in models}
	t.eq(sorted(got), sorted(exp), "%s: the models found" % what)
	for d, (label, files) in exp.items():
		m = got.get(d)
		if m is None:
			continue
		n, params = expected_summary(files)
		t.eq(m["tensors"], n, "%s/%s: tensors" % (what, d))
		t.eq(m["parameters"], params, "%s/%s: parameters" % (what, d))
		if "models" in j:
			t.eq(m["source"], label, "%s/%s: source" % (what, d))
			t.eq(m["path"], os.path.join(src, d), "%s/%s: path"
			     % (what, d))


def verify_model(t, mdir, files, what):
	"""Every tensor of the model made of files, read at mdir/NAME, equals
	its source bytes (whole reads and preads)."""
	for p in files:
		S = harness.SrcFile(p)
		for x in S.tensors:
			f = os.path.join(mdir, harness.encode_name(x.name))
			try:
				with open(f, "rb") as fh:
					data = fh.read()
			except OSError as e:
				t.check(False, "%s: %s: %s" % (what, x.name, e))
				continue
			t.check(data == S.read(x), "%s: %s: bytes equal the source"
				% (what, x.name))
			harness.verify_preads(t, f, S, x, "%s: %s" % (what, x.name))


def run_(t):
	d = harness.tmpdir("trees")
	hub = os.path.join(d, "hub")
	hub_exp = gen_trees.hub_cache(hub)
	pipe = os.path.join(d, "pipe")
	pipe_exp = gen_trees.pipeline(pipe)
	loras = os.path.join(d, "loras")
	lora_exp = gen_trees.loras(loras)

	# ---- discovery, through stfs-inspect ----
	check_inspect(t, hub, hub_exp, "hub")
	check_inspect(t, pipe, pipe_exp, "pipe")
	check_inspect(t, loras, lora_exp, "loras")
	repo = os.path.join(hub, "models--org--tiny-sd")
	check_inspect(t, repo, {k[len("org/tiny-sd/"):]: v for k, v in
				hub_exp.items() if k.startswith("org/tiny-sd/")},
		      "repo dir")
	bert = os.path.join(hub, "models--org--tiny-bert")
	check_inspect(t, bert, {"": hub_exp["org/tiny-bert"]}, "bert repo dir")
	llama_idx = hub_exp["org/tiny-llama"][0]
	snap = os.path.dirname(llama_idx)
	check_inspect(t, snap, {"": hub_exp["org/tiny-llama"]}, "snapshot dir")
	check_inspect(t, llama_idx, {"": hub_exp["org/tiny-llama"]},
		      "index in a snapshot")
	# the old revision stays reachable by its snapshot
	old = [os.path.join(bert, "snapshots", r) for r in
	       os.listdir(os.path.join(bert, "snapshots"))
	       if r != gen_trees.rev(3)]
	t.eq(len(old), 1, "bert has two revisions")
	r = run([STFS_INSPECT, "--json", old[0]])
	t.check(r.returncode == 0 and json.loads(r.stdout)["metadata"]["rev"]
		== "2", "the old snapshot holds revision 2: %r" % r.stderr[:200])

	# several SOURCEs: one block each, in order
	single = lora_exp["v2.1"][0]
	r = run([STFS_INSPECT, "--json", pipe, single])
	t.eq(r.returncode, 0, "two SOURCEs: exit 0 (%r)" % r.stderr[:300])
	if r.returncode == 0:
		ms = json.loads(r.stdout)["models"]
		t.eq([m["path"] for m in ms],
		     [os.path.join(pipe, k) for k in sorted(pipe_exp)] + [single],
		     "two SOURCEs: the models' paths")
		t.eq(ms[-1]["dir"], "", "two SOURCEs: a file has dir \"\"")
	r = run([STFS_INSPECT, loras, hub])
	out = r.stdout.decode("utf-8")
	heads = [ln for ln in out.splitlines() if ln.startswith("== ")]
	t.eq(heads, ["== %s ==" % os.path.join(loras, k) for k in sorted(lora_exp)]
	     + ["== %s ==" % os.path.join(hub, k) for k in sorted(hub_exp)],
	     "text: one block per model, headed by its path")
	# one bad SOURCE among good ones: reported, the others still shown
	bad = os.path.join(d, "lfs.safetensors")
	with open(bad, "w") as f:
		f.write("version https://git-lfs.github.com/spec/v1\n")
	r = run([STFS_INSPECT, "--json", bad, single])
	t.eq(r.returncode, 1, "a bad SOURCE among good ones: exit 1")
	t.check(b"git lfs pull" in r.stderr, "the bad SOURCE is explained")
	t.check(r.returncode != 1 or len(json.loads(r.stdout)["models"]) == 1,
		"the good SOURCE is still shown")

	# ---- mounts of one model where it lives ----
	for src, (label, files), what in (
			(bert, hub_exp["org/tiny-bert"], "repo dir"),
			(snap, hub_exp["org/tiny-llama"], "sharded snapshot"),
			(llama_idx, hub_exp["org/tiny-llama"], "snapshot index"),
			(single, lora_exp["v2.1"], "a LoRA file")):
		with harness.Mount(t, src) as m:
			verify_model(t, m.path, files, what)
			with open(os.path.join(m.path, "__summary__.json")) as f:
				summ = json.load(f)
			n, params = expected_summary(files)
			t.eq(summ["tensors"], n, "%s: __summary__.json tensors" % what)
	# ---- mounts of trees: a directory per model, every byte ----
	for src, exp, what in ((hub, hub_exp, "hub"), (pipe, pipe_exp, "pipe"),
			       (loras, lora_exp, "loras"),
			       (repo, {k[len("org/tiny-sd/"):]: v for k, v in
				       hub_exp.items()
				       if k.startswith("org/tiny-sd/")},
				"repo dir")):
		with harness.Mount(t, src) as m:
			top = sorted({k.split("/")[0] for k in exp})
			t.eq(sorted(x for x in os.listdir(m.path) if x[0] != "."),
			     sorted(top + ["__summary__.json"]),
			     "%s: the root lists the models' top directories"
			     % what)
			with open(os.path.join(m.path, "__summary__.json")) as f:
				root = json.load(f)
			t.eq(sorted(x["path"] for x in root.get("model_list", [])),
			     sorted(exp), "%s: root __summary__.json lists the "
			     "models" % what)
			for k, (label, files) in sorted(exp.items()):
				md = os.path.join(m.path, k)
				verify_model(t, md, files, "%s/%s" % (what, k))
				with open(os.path.join(md, "__summary__.json")) as f:
					summ = json.load(f)
				t.eq(summ.get("source"), label, "%s/%s: __summary__.json "
				     "source" % (what, k))
				n, params = expected_summary(files)
				t.eq(summ.get("tensors"), n, "%s/%s: tensors"
				     % (what, k))
			# du, find and tar see the models only (views hidden)
			r = run(["find", m.path, "-type", "f"])
			found = r.stdout.decode("utf-8", "surrogateescape").split("\n")
			t.check(not [f for f in found if "/.npy/" in f or
				     "/.txt/" in f], "%s: find sees no views" % what)

	polish(t, d, single, loras)
	harness.rmtree_safe(d)


def polish(t, d, single, loras):
	"""Issue 12.7: fsname, auto_unmount, a non-empty mount point, swapped
	arguments, a missing mount point."""
	# fsname: the absolute path, also from a relative SOURCE
	rel = os.path.relpath(single, os.getcwd())
	with harness.Mount(t, rel) as m:
		e = harness.mount_entry(m.path)
		t.check(e and e[2] == os.path.realpath(single),
			"findmnt shows the absolute path: %r" % (e and e[2],))
	# a non-empty mount point: mounted, with a warning
	mnt = os.path.join(harness.tmpdir("mnt"), "busy")
	os.makedirs(mnt)
	with open(os.path.join(mnt, "old-file"), "w") as f:
		f.write("x")
	with harness.Mount(t, single, mnt=mnt) as m:
		t.check("is not empty" in m.output(), "warning for a non-empty "
			"mount point: %r" % m.output())
		t.check(not os.path.exists(os.path.join(mnt, "old-file")),
			"the mount hides the old file")
	t.check(os.path.exists(os.path.join(mnt, "old-file")),
		"the old file is back after the unmount")
	# -o auto_unmount: the daemon killed, the mount goes away by itself
	m = harness.Mount(t, single, args=["-o", "auto_unmount"])
	try:
		m.start()
		os.kill(m.proc.pid, 9)
		m.proc.wait(timeout=10)
		# fusermount3 notices the closed descriptor; slow under load
		deadline = harness.time.monotonic() + 30
		while harness.is_mounted(m.path) and \
				harness.time.monotonic() < deadline:
			harness.time.sleep(0.05)
		t.check(not harness.is_mounted(m.path), "auto_unmount: the mount "
			"is gone after kill -9 of the daemon")
	finally:
		m.returncode = m.proc.returncode if m.proc else None
		m.unmount()
	# swapped arguments, missing mount point
	empty = os.path.join(d, "no-models")
	os.makedirs(empty)
	for f in ("x.safetensors", "x.gguf", "pytorch_model.bin"):
		r = run([harness.STFS, empty, os.path.join(d, f)])
		err = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 2, "swapped, %s: exit 2 (%s)" % (f, err))
		t.check("did you swap SOURCE and MOUNTPOINT?" in err, "swapped, "
			"%s: the hint: %r" % (f, err))
	gone = os.path.join(d, "no", "such", "dir")
	r = run([harness.STFS, single, gone])
	err = r.stderr.decode("utf-8", "replace")
	t.eq(r.returncode, 2, "missing mount point: exit 2 (%s)" % err)
	t.check("mkdir -p %s" % gone in err, "missing mount point: the "
		"mkdir -p hint: %r" % err)
	t.check(not os.path.exists(gone), "nothing created")


harness.main("int-trees", run_, mounts=True)
