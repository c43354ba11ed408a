#!/usr/bin/env python3
"""int-quant-remote: quantized models over hf:// and s3:// read with the
configs beside them, as a local folder's are (issue 31).

The same folder of models is served by the Hub look-alike (hubsim.py) and
the s3 look-alike (s3srv.py):

  gptqv2/   GPTQ with GPTQModel's v2 zero points, which only
            quantize_config.json tells (the tensors alone give v1's
            values: every zero off by one)
  fp8cfg/   two models (a.safetensors, b.safetensors) of FP8 blocks of
            64 x 64 on a 130 x 70 weight, which only config.json tells
            (the grid 3 x 2 tiles nothing else)
  gptqv1/   GPTQ without any config: v1 is assumed, and the sidecar and
            the summary say so

For each, .dequant/NAME and .dequant/.npy/NAME.npy equal the numpy
reference (tests/quant_ref.py), the sidecar names the config that told
the settings, or says what was assumed.  Each config beside a model
costs one request at mount (a folder's once for all of its models), also
beside a model with nothing quantized (plain/).
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import hubsim  # noqa: E402
import s3srv  # noqa: E402
import test_quant as tq  # noqa: E402

REGION = "eu-west-1"
AKID = "AKIAQUANTREMOTE00001"
KEYS = {AKID: ("quant-secret-" + os.urandom(8).hex(), None)}
TOKEN = "hf_quant"


def models(rng):
	"""{mount dir: Model} and the repository's files {path: bytes}."""
	v2 = tq.gptq_models(rng)[1]
	cfg = tq.fp8_models(rng)[1]
	v1 = tq.Model("gptqv1")
	tq.gptq_layer(v1, rng, "l.0.q_proj.", 64, 24, 4, 32, False, True)
	root = harness.tmpdir("quantremote")
	files = {}
	want = {}
	for m, names in ((v2, ["model.safetensors"]),
			 (cfg, ["a.safetensors", "b.safetensors"]),
			 (v1, ["model.safetensors"])):
		tq.write(m, root)
		d = os.path.join(root, m.name)
		for f in os.listdir(d):
			data = tq.read(os.path.join(d, f))
			if f == "model.safetensors":
				for n in names:
					files[m.name + "/" + n] = data
					want[m.name if len(names) == 1 else
					     m.name + "/" + n[:-12]] = m
			else:
				files[m.name + "/" + f] = data
	# a model with nothing quantized, its config.json beside it
	plain = os.path.join(root, "plain.safetensors")
	harness.gen.write_safetensors(plain, {"w": ("F32", [4], np.ones(
		4, np.float32))})
	files["plain/model.safetensors"] = tq.read(plain)
	files["plain/config.json"] = b'{"model_type": "llama"}'
	return want, files


def check_models(t, mnt, want, label):
	for d, m in sorted(want.items()):
		dq = os.path.join(mnt, d, ".dequant")
		for name, (scheme, plist, want_v) in m.logical.items():
			what = "%s: %s/%s" % (label, d, name)
			raw = np.frombuffer(tq.read(os.path.join(dq, name)),
					    dtype="<f4")
			if raw.size == want_v.size:
				raw = raw.reshape(want_v.shape)
			t.check(tq.same(raw, want_v),
				"%s: .dequant/ values equal the reference" % what)
			a = np.load(os.path.join(dq, ".npy", name + ".npy"))
			t.check(tq.same(a, want_v), "%s: .dequant/.npy equals "
				"the reference" % what)
			side = json.loads(tq.read(os.path.join(dq, name + ".json")))
			q = side.get("quantization", {})
			told = sorted(m.config)
			if told:
				t.check(q.get("config") in told and
					"assumed" not in q, "%s: the sidecar "
					"names %s: %r" % (what, told, q))
			else:
				t.check(q.get("config") is None and
					"checkpoint_format gptq (v1)" in
					q.get("assumed", ""), "%s: the sidecar "
					"says what it assumed: %r" % (what, q))


def check_requests(t, files, got, label):
	"""got: the config files requested, one entry per request."""
	configs = sorted(p for p in files if p.endswith("config.json"))
	t.eq(sorted(got), configs, "%s: each config beside a model is "
	     "requested once" % label)


def check_hub(t, want, files):
	sim = hubsim.HubSim(tokens=(TOKEN,), ttl=600.0, small=4096)
	sim.start()
	try:
		sim.add_repo("org/quant").commit(files)
		home = harness.tmpdir("quanthub")
		env = sim.user_env(home, TOKEN)
		with harness.Mount(t, "hf://org/quant", env=env,
				   ready_timeout=60) as mnt:
			got = [e["file"] for e in sim.requests("hub", "resolve")
			       if e["file"].endswith("config.json")]
			check_requests(t, files, got, "hf://")
			check_models(t, mnt.path, want, "hf://")
	finally:
		sim.stop()


def check_s3(t, want, files):
	why = s3srv.available()
	if why:
		t.fatal(why)
	d = harness.tmpdir("quants3")
	home = os.path.join(d, "home")
	os.makedirs(home)
	os.makedirs(os.path.join(d, "srv"))
	with s3srv.S3(os.path.join(d, "srv"), KEYS, region=REGION) as srv:
		c = srv.client(AKID)
		c.create_bucket(Bucket="zoo")
		for rel, data in sorted(files.items()):
			c.put_object(Bucket="zoo", Key="q/" + rel, Body=data)
		env = srv.user_env(AKID, home)
		mark = srv.mark()
		with harness.Mount(t, "s3://zoo/q/", env=env,
				   ready_timeout=60) as mnt:
			got = [r["path"].split("/q/", 1)[1]
			       for r in srv.requests_since(mark)
			       if r["path"].endswith("config.json")]
			check_requests(t, files, got, "s3://")
			check_models(t, mnt.path, want, "s3://")


def main(t):
	want, files = models(np.random.default_rng(131))
	check_hub(t, want, files)
	check_s3(t, want, files)


if __name__ == "__main__":
	harness.main("int-quant-remote", main, mounts=True)
