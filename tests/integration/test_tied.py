#!/usr/bin/env python3
"""int-tied: tied weights said plainly (issue 17.5).

A model saved the way save_model saves a tied model: the input embeddings
stored once, no lm_head.weight, and config.json with
"tie_word_embeddings": true.  stfs-inspect (text and --json) and the
mount's __summary__.json say it is tied; the mount shows exactly what the
file stores (no lm_head.weight).  Without the config, or with false, they
say nothing."""

import json
import os

import numpy as np

import harness
import gen_sharded
from harness import STFS_INSPECT, gen, run


def model(d, config):
	os.makedirs(d, exist_ok=True)
	rng = np.random.default_rng(5)
	T = [("model.embed_tokens.weight", "F32", [16, 8],
	      rng.standard_normal(128).astype("<f4").tobytes()),
	     ("model.norm.weight", "F32", [8], np.ones(8, "<f4").tobytes())]
	p = os.path.join(d, "model.safetensors")
	gen.write_safetensors(p, T, {"format": "pt"})
	if config is not None:
		with open(os.path.join(d, "config.json"), "w") as f:
			json.dump(config, f)
	return p, T


def run_(t):
	d = harness.tmpdir("tied")
	cases = {
		"tied": ({"model_type": "llama", "tie_word_embeddings": True}, True),
		"untied": ({"model_type": "llama", "tie_word_embeddings": False}, False),
		"noconfig": (None, False),
		"badconfig": ("not json {", False),
	}
	for name, (cfg, tied) in cases.items():
		sub = os.path.join(d, name)
		if isinstance(cfg, str):
			p, T = model(sub, None)
			with open(os.path.join(sub, "config.json"), "w") as f:
				f.write(cfg)
		else:
			p, T = model(sub, cfg)
		for arg in (p, sub):
			r = run([STFS_INSPECT, "--json", arg])
			t.eq(r.returncode, 0, "%s: --json exit 0" % name)
			j = json.loads(r.stdout)
			t.eq(j.get("tie_word_embeddings"), True if tied else None,
			     "%s (%s): --json tie_word_embeddings" % (name, arg))
			r = run([STFS_INSPECT, arg])
			t.eq(b"\ntied:" in r.stdout, tied,
			     "%s: text says tied: %r" % (name, r.stdout[-300:]))
		with harness.Mount(t, p) as m:
			with open(os.path.join(m.path, "__summary__.json")) as f:
				s = json.load(f)
			t.eq(s.get("tie_word_embeddings"), True if tied else None,
			     "%s: __summary__.json tie_word_embeddings" % name)
			names = set(os.listdir(m.path))
			t.check("lm_head.weight" not in names,
				"%s: the mount invents no lm_head.weight" % name)
			for n, dt, shape, raw in T:
				with open(os.path.join(m.path, n), "rb") as f:
					t.eq(f.read(), raw, "%s: %s bytes" % (name, n))

	# a sharded tied model: config.json next to the index
	sh = os.path.join(d, "sharded")
	_, T = model(os.path.join(d, "tmp"), None)
	idx, _ = gen_sharded.write_sharded(sh, T, 2)
	with open(os.path.join(sh, "config.json"), "w") as f:
		json.dump({"tie_word_embeddings": True}, f)
	r = run([STFS_INSPECT, "--json", idx])
	t.eq(json.loads(r.stdout).get("tie_word_embeddings"), True,
	     "sharded: --json tie_word_embeddings")


if __name__ == "__main__":
	harness.main("int-tied", run_, mounts=True)
