#!/usr/bin/python3
"""samples/make.py [DIR] - the models the README's examples name, made by
this project's own writer (tests/gen.py), so that every example runs
without downloading anything.  DIR defaults to this directory.

  model.safetensors          a tiny model with today's common (Llama)
                             tensor names; committed (gen.py llama)
  llama/                     the same tensors as a sharded set: two
                             shards and model.safetensors.index.json
  ckpt-1100.safetensors      two checkpoints of it: 1100 is the model,
  ckpt-1200.safetensors      1200 has three tensors changed, one of them
                             holding a NaN, and its own "step" metadata

The bytes are deterministic (gen.py's Rng).  A file is written only when
it is missing or differs, so running this again changes nothing under a
mount of it.  scripts/try runs it; the test int-readme runs the README's
examples against its output.
"""
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import gen  # noqa: E402
import gen_sharded  # noqa: E402

CHANGED = ("model.layers.0.self_attn.q_proj.weight",
	   "model.layers.1.self_attn.q_proj.weight",
	   "model.layers.1.mlp.down_proj.weight")
NAN_IN = "model.layers.1.mlp.down_proj.weight"
BF16_NAN = struct.pack("<H", 0x7FC0)


def put(path, write):
	"""write(tmp) makes the file; it replaces path only when different."""
	d = os.path.dirname(path)
	os.makedirs(d, exist_ok=True)
	fd, tmp = tempfile.mkstemp(dir=d, prefix=".make-")
	os.close(fd)
	try:
		write(tmp)
		with open(tmp, "rb") as f:
			new = f.read()
		try:
			with open(path, "rb") as f:
				same = f.read() == new
		except FileNotFoundError:
			same = False
		if same:
			return False
		os.chmod(tmp, 0o644)
		os.replace(tmp, path)
		return True
	finally:
		if os.path.exists(tmp):
			os.unlink(tmp)


def ckpt_1200():
	"""The model one training step on: CHANGED redrawn, a NaN in one."""
	T = []
	for k, (name, dtype, shape, data) in enumerate(gen.llama_tensors()):
		if name in CHANGED:
			data = gen.Rng(1200 + k).bf16(gen.numel_of(shape), -0.1,
						      0.1)
		if name == NAN_IN:
			data = data[:6] + BF16_NAN + data[8:]
		T.append((name, dtype, shape, data))
	return T


def make(d):
	"""Write every sample into d; the paths written."""
	done = []

	def one(rel, write):
		if put(os.path.join(d, rel), write):
			done.append(rel)
	one("model.safetensors", gen.gen_llama)
	one("ckpt-1100.safetensors", lambda p: gen.write_safetensors(
		p, gen.llama_tensors(), {"format": "pt", "step": "1100"}))
	one("ckpt-1200.safetensors", lambda p: gen.write_safetensors(
		p, ckpt_1200(), {"format": "pt", "step": "1200"}))
	with tempfile.TemporaryDirectory(dir=d, prefix=".make-") as tmp:
		gen_sharded.write_sharded(tmp, gen.llama_tensors(), 2)
		for f in sorted(os.listdir(tmp)):
			with open(os.path.join(tmp, f), "rb") as fh:
				data = fh.read()

			def copy(p, data=data):
				with open(p, "wb") as fh:
					fh.write(data)
			one(os.path.join("llama", f), copy)
	return done


def main():
	d = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else HERE)
	for rel in make(d):
		print("wrote %s" % os.path.join(d, rel))
	return 0


if __name__ == "__main__":
	sys.exit(main())
