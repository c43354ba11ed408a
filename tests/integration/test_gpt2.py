#!/usr/bin/env python3
"""int-gpt2: a GPT-2-small-shaped file (exact shapes, F32, 137,022,720
parameters, ~548 MB) made in a temp dir: every tensor compared (sha256 and
cmp), parallel random reads, the summary and stfs-inspect's count.
Deleted afterwards."""

import json
import os
import random
import threading
import time

import harness
from harness import gen, run


def run_(t):
	d = harness.tmpdir("gpt2")
	src = os.path.join(d, "gpt2.safetensors")
	t0 = time.monotonic()
	lay = gen.gen_gpt2(src)
	print("generated %s: %d bytes in %.1f s" % (src, os.path.getsize(src),
						     time.monotonic() - t0), flush=True)
	t.eq(sum(gen.numel_of(s) for _, _, s, _, _ in lay.entries), gen.GPT2_PARAMS,
	     "generator: 137,022,720 parameters")
	t.eq(len(lay.entries), 2 + 12 * 13 + 2, "generator: 160 tensors")

	j, r = harness.inspect_json(src)
	if t.check(j is not None, "stfs-inspect --json exit 0"):
		t.eq(j["parameters"], {"F32": gen.GPT2_PARAMS}, "inspect parameters")
		t.eq(j["parameters_total"], gen.GPT2_PARAMS, "inspect parameters_total")
		t.eq(j["tensors"], 160, "inspect tensors")
		t.eq(j["bytes"], gen.GPT2_PARAMS * 4, "inspect bytes")

	with harness.Mount(t, src) as m:
		t0 = time.monotonic()
		S = harness.verify_tree(t, src, m.path, big=True)
		print("verified every tensor in %.1f s" % (time.monotonic() - t0),
		      flush=True)
		with open(os.path.join(m.path, "__summary__.json")) as f:
			summ = json.load(f)
		t.eq(summ.get("parameters"), {"F32": gen.GPT2_PARAMS},
		     "__summary__.json parameters")
		with open(os.path.join(m.path, "h.11.mlp.c_proj.weight.json")) as f:
			side = json.load(f)
		t.eq(side["shape"], [3072, 768], "h.11.mlp.c_proj.weight shape")
		t.eq(side["nbytes"], 3072 * 768 * 4, "h.11.mlp.c_proj.weight nbytes")

		# parallel random reads against the source
		errors = []
		big = [x for x in S.tensors if x.nbytes > 1 << 20]

		def worker(seed):
			rnd = random.Random(seed)
			fds = {}
			try:
				with open(src, "rb") as sf:
					for _ in range(300):
						x = rnd.choice(big)
						off = rnd.randrange(x.nbytes)
						n = rnd.choice((1, 7, 4096, 65536, 1 << 20))
						if x.name not in fds:
							fds[x.name] = os.open(os.path.join(
								m.path, x.name), os.O_RDONLY)
						got = os.pread(fds[x.name], n, off)
						want = os.pread(sf.fileno(),
								min(n, x.nbytes - off),
								x.offset + off)
						if got != want:
							errors.append((x.name, off, n))
			except Exception as e:
				errors.append(repr(e))
			finally:
				for fd in fds.values():
					os.close(fd)
		ths = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
		for th in ths:
			th.start()
		for th in ths:
			th.join()
		t.check(not errors, "8 threads x 300 random preads equal the "
			"source: %s" % harness.short(errors[:5]))

		# one big sequential read with dd, whole wte
		x = S.by_name["wte.weight"]
		t0 = time.monotonic()
		r = run(["dd", "if=" + os.path.join(m.path, "wte.weight"),
			 "of=/dev/null", "bs=1M", "status=none"], timeout=300)
		dt = time.monotonic() - t0
		t.eq(r.returncode, 0, "dd of wte.weight")
		print("dd wte.weight (%d MB): %.2f s, %.0f MB/s" % (
			x.nbytes >> 20, dt, x.nbytes / 1e6 / max(dt, 1e-6)), flush=True)
	os.unlink(src)


harness.main("int-gpt2", run_)
