#!/usr/bin/env python3
"""int-ckpt: the checkpoints users bring, and the truth about each (issue 39).

Every fixture is written here by Debian's torch 1.13 (torch.save), or by
Python's pickle where torch.save cannot write what a user's file holds.

- Cycles: a scheduler.pt of OneCycleLR (torch 1.13 pickles its bound
  method anneal_func, whose object holds the method again) and a
  Lightning-like .ckpt holding one mount; every tensor equals
  torch.load's, and the value that closes the cycle is
  {"__ref__": PATH} in __metadata__.json, PATH naming the value it is.
  The optimizer inside the scheduler keeps its state keyed by its
  parameters: each entry is named by its index, its key as
  INDEX.__key__.
- __summary__.json of a .bin says "format": "pytorch" ("pytorch-sharded"
  for an index's set), header_bytes the pickle's size, bytes each stored
  byte once (tied weights share a storage) and the names that share one;
  stfs-inspect prints them on a "shared:" line.
- Files named as checkpoints that are not (random bytes, a cut zip) are
  refused with PyTorch's error, leading with "not a PyTorch checkpoint"
  (also int-sniff).
"""

import json
import os
import zipfile

import harness
from harness import STFS_INSPECT, run

import torch


def raw_bytes(x):
	x = x.detach().contiguous()
	if x.dtype == torch.bfloat16:
		return x.view(torch.int16).numpy().tobytes()
	return x.numpy().tobytes()


def read(path, mode="rb"):
	with open(path, mode) as f:
		return f.read()


# ---- a value that contains itself -----------------------------------------

def onecycle(lr=0.1):
	model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),
				    torch.nn.Linear(3, 2))
	opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
	sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr,
						    total_steps=20)
	for _ in range(3):
		model(torch.randn(5, 4)).sum().backward()
		opt.step()
		sched.step()
	return model, opt, sched


def check_cycles(t, d):
	torch.manual_seed(39)
	model, opt, sched = onecycle()
	sd = sched.state_dict()
	t.check(getattr(sd.get("anneal_func"), "__self__", None) is sched,
		"torch 1.13's OneCycleLR.state_dict() holds a bound method of "
		"the scheduler (the cycle this test is about)")
	path = os.path.join(d, "scheduler.pt")
	torch.save(sd, path)
	params = list(model.parameters())
	prefix = "anneal_func.args.0.state.optimizer.state.param_groups.0."
	with harness.Mount(t, path) as m:
		for i, p in enumerate(params):
			name = prefix + "params.%d" % i
			f = os.path.join(m.path, harness.encode_name(name))
			t.check(os.path.exists(f) and read(f) == raw_bytes(p),
				"scheduler.pt: %s equals the parameter" % name)
		# the optimizer's own state, keyed by its parameters
		st = "anneal_func.args.0.state.optimizer.state.state."
		for i, (p, s) in enumerate(opt.state.items()):
			for name, want in ((st + "%d.__key__" % i, p),
					   (st + "%d.momentum_buffer" % i,
					    s["momentum_buffer"])):
				f = os.path.join(m.path, harness.encode_name(name))
				t.check(os.path.exists(f) and
					read(f) == raw_bytes(want),
					"scheduler.pt: %s is mounted" % name)
		meta = json.loads(read(os.path.join(m.path, "__metadata__.json"),
				       "r"))
		ref = "anneal_func.args.0.state.anneal_func"
		t.eq(json.loads(meta.get(ref, "null")),
		     {"__ref__": "anneal_func"}, "scheduler.pt: the cycle is a "
		     "reference to the method where it is first")
		t.eq(meta.get("anneal_func.__call__"), "__builtin__.getattr",
		     "scheduler.pt: the method is what getattr makes")
		t.eq(meta.get("anneal_func.args.1"), "_annealing_cos",
		     "scheduler.pt: the method's name")
		t.eq(meta.get("total_steps"), "20", "scheduler.pt: total_steps")
		t.eq(meta.get("last_epoch"), str(sd["last_epoch"]),
		     "scheduler.pt: last_epoch")

	# a Lightning checkpoint: the scheduler's state beside the model's
	ckpt = {"epoch": 3, "global_step": 60,
		"pytorch-lightning_version": "1.9.0",
		"state_dict": {"model." + k: v
			       for k, v in model.state_dict().items()},
		"optimizer_states": [opt.state_dict()],
		"lr_schedulers": [sd],
		"hyper_parameters": {"lr": 0.1, "layers": [4, 3, 2]}}
	path = os.path.join(d, "epoch=3-step=60.ckpt")
	torch.save(ckpt, path)
	loaded = torch.load(path)
	with harness.Mount(t, path) as m:
		for k, v in loaded["state_dict"].items():
			f = os.path.join(m.path, harness.encode_name("state_dict." + k))
			t.check(os.path.exists(f) and read(f) == raw_bytes(v),
				".ckpt: state_dict.%s equals torch.load's" % k)
		for n, st in loaded["optimizer_states"][0]["state"].items():
			name = "optimizer_states.0.state.%d.momentum_buffer" % n
			f = os.path.join(m.path, harness.encode_name(name))
			t.check(os.path.exists(f) and
				read(f) == raw_bytes(st["momentum_buffer"]),
				".ckpt: %s equals torch.load's" % name)
		meta = json.loads(read(os.path.join(m.path, "__metadata__.json"),
				       "r"))
		t.eq(json.loads(meta.get("lr_schedulers.0.anneal_func.args.0."
					 "state.anneal_func", "null")),
		     {"__ref__": "lr_schedulers.0.anneal_func"},
		     ".ckpt: the cycle is a reference by its full path")
		t.eq(meta.get("epoch"), "3", ".ckpt: epoch")
		t.eq(json.loads(meta.get("hyper_parameters.layers", "null")),
		     [4, 3, 2], ".ckpt: hyper_parameters")


# ---- the summary of a checkpoint -------------------------------------------

def check_summary(t, d):
	torch.manual_seed(1)
	emb = torch.randn(64, 16)
	sd = {"transformer.wte.weight": emb, "lm_head.weight": emb,
	      "transformer.ln_f.weight": torch.ones(16),
	      "transformer.ln_f.bias": torch.zeros(16),
	      "h.0.attn.c_attn.weight": torch.randn(16, 48)}
	path = os.path.join(d, "pytorch_model.bin")
	torch.save(sd, path)
	storages = {}
	for v in sd.values():
		storages[v.storage().data_ptr()] = v.storage().nbytes()
	with zipfile.ZipFile(path) as z:
		pkl = [i.file_size for i in z.infolist()
		       if i.filename.endswith("/data.pkl")][0]
	want_shared = [["lm_head.weight", "transformer.wte.weight"]]

	def check(j, label):
		t.eq(j.get("format"), "pytorch", "%s: format" % label)
		t.eq(j.get("bytes"), sum(storages.values()),
		     "%s: bytes count the shared storage once" % label)
		t.eq(j.get("header_bytes"), pkl, "%s: header_bytes is the "
		     "pickle's size" % label)
		t.eq(j.get("file_bytes"), os.path.getsize(path),
		     "%s: file_bytes" % label)
		t.eq([sorted(g) for g in j.get("shared_storage", [])],
		     want_shared, "%s: the names that share a storage" % label)
		t.eq(j.get("shared_storage_count"), 1,
		     "%s: one shared storage" % label)

	r = run([STFS_INSPECT, "--json", path])
	check(json.loads(r.stdout or b"{}"), "stfs-inspect --json")
	r = run([STFS_INSPECT, path])
	out = r.stdout.decode()
	t.check("shared:      lm_head.weight = transformer.wte.weight "
		"(one storage)\n" in out, "stfs-inspect: the shared line: %r"
		% out)
	with harness.Mount(t, path) as m:
		check(json.loads(read(os.path.join(m.path, "__summary__.json"),
				      "r")), "__summary__.json")
	# a sharded set of .bin files
	sub = os.path.join(d, "sharded")
	os.mkdir(sub)
	names = sorted(sd)
	wm = {}
	for i, part in enumerate((names[:2], names[2:])):
		shard = "pytorch_model-%05d-of-00002.bin" % (i + 1)
		torch.save({k: sd[k].clone() for k in part},
			   os.path.join(sub, shard))
		wm.update({k: shard for k in part})
	with open(os.path.join(sub, "pytorch_model.bin.index.json"), "w") as f:
		json.dump({"metadata": {}, "weight_map": wm}, f)
	r = run([STFS_INSPECT, "--json", sub])
	t.eq(json.loads(r.stdout or b"{}").get("format"), "pytorch-sharded",
	     "a set of .bin shards: format")


def check_not_checkpoints(t, d):
	good = os.path.join(d, "good.pt")
	torch.save({"w": torch.ones(2000)}, good)
	cases = (("random.bin", bytes((i * 37 + 11) % 256 for i in range(4096)),
		  ["not a PyTorch checkpoint: its first 8 bytes are 0b 30 55 "
		   "7a 9f c4 e9 0e", "damaged"]),
		 ("cut.pt", read(good)[:5000],
		  ["a damaged PyTorch checkpoint: a zip archive (what "
		   "torch.save writes) that libzip cannot read",
		   "incomplete download"]))
	for name, data, words in cases:
		p = os.path.join(d, name)
		with open(p, "wb") as f:
			f.write(data)
		r = run([STFS_INSPECT, p])
		err = r.stderr.decode("utf-8", "replace")
		t.check(r.returncode == 1 and
			("%s: InvalidCheckpoint: " % p) in err and
			all(w in err for w in words) and
			"HeaderTooLarge" not in err and
			"safetensors" not in err and len(err.splitlines()) == 1,
			"%s: PyTorch's error, leading with what it is not: %r"
			% (name, err))


def run_(t):
	d = harness.tmpdir("ckpt")
	check_cycles(t, d)
	check_summary(t, d)
	check_not_checkpoints(t, d)
	harness.rmtree_safe(d)


harness.main("int-ckpt", run_, mounts=True)
