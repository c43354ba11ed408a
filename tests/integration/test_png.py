#!/usr/bin/env python3
"""int-png: the pictures of .png/ (issue 37), decoded by an independent
PNG reader (PIL) and checked against a numpy reference of the rule that
docs/usage.md states:

- the map: rows x columns (leading dimensions merged into rows, 1-D one
  row), blocks of ceil(n / px) values per axis, each pixel the value of
  largest magnitude in its block, sign kept (the positive on a tie), NaN
  when the block holds one; colours from the documented anchors, linear,
  symmetric about zero, scale the largest finite |pixel|; NaN, +Inf and
  -Inf their own colours;
- tensors made for it: an outlier column is the extreme colour down its
  pixel column, NaN and Inf blocks get their colours, a constant tensor
  is uniform; 1-D, 3-D, BF16, F8, a GGUF Q4_K and an FP8-block weight
  (.png/ and .dequant/.png/) render;
- the histogram: its stfs:stats are the numbers of .stats/, its bins the
  documented rule over the values;
- every file's size is known at stat and is what a read returns; names
  of tensors ending in ".hist" do not meet histograms; -o png_px."""

import io
import json
import os
import sys

import numpy as np

import harness
from harness import gen

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import gguf_dequant_ref as gref  # noqa: E402
import gguf_gen  # noqa: E402
from test_views import decode  # noqa: E402

from PIL import Image  # noqa: E402

LEVELS = 127
# the colour map's anchors (docs/usage.md)
ANCHORS = [(-1.0, (16, 48, 128)), (-0.5, (96, 150, 214)),
	   (0.0, (246, 246, 246)), (0.5, (230, 120, 92)),
	   (1.0, (128, 12, 32))]
NAN_C, PINF_C, NINF_C = (0, 200, 0), (255, 215, 0), (200, 0, 200)
BINS = 100


def step_colour(k):
	t = k / LEVELS
	for (t0, c0), (t1, c1) in zip(ANCHORS, ANCHORS[1:]):
		if t <= t1 or t1 == 1.0:
			f = (t - t0) / (t1 - t0)
			# rounded half away from zero, as C's lround
			return tuple(int(np.floor(a + f * (b - a) + 0.5))
				     for a, b in zip(c0, c1))


STEP_COLOURS = {k: step_colour(k) for k in range(-LEVELS, LEVELS + 1)}


def matrix(v, shape, complex_=False):
	v = np.asarray(v, np.float64).reshape(-1)
	cols = shape[-1] * (2 if complex_ else 1) if shape else 1
	return v.reshape(-1, cols) if v.size else v.reshape(0, max(cols, 1))


def reference_map(m, px=1024):
	"""(pixel values, block rows, block cols) by the stated rule."""
	rows, cols = m.shape
	br, bc = -(-rows // px), -(-cols // px)
	ph, pw = -(-rows // br), -(-cols // bc)
	# zeros pad the last blocks: they never win over a value (a tie at
	# zero is a zero either way)
	p = np.zeros((ph * br, pw * bc))
	p[:rows, :cols] = m
	b = p.reshape(ph, br, pw, bc)
	nan = np.isnan(b).any((1, 3))
	a = np.where(np.isnan(b), -1.0, np.abs(b))
	mx = a.max((1, 3))
	pos = (b == mx[:, None, :, None]).any((1, 3))
	out = np.where(pos, mx, -mx)
	out[nan] = np.nan
	return out, br, bc


def expected_colours(pix):
	fin = pix[np.isfinite(pix)]
	s = float(np.abs(fin).max()) if fin.size else 0.0
	table = np.array([STEP_COLOURS[k] for k in range(-LEVELS, LEVELS + 1)])
	with np.errstate(invalid="ignore", divide="ignore"):
		t = pix / s * LEVELS if s > 0 else np.zeros_like(pix)
	t = np.clip(np.nan_to_num(t), -LEVELS, LEVELS)
	k = (np.sign(t) * np.floor(np.abs(t) + 0.5)).astype(np.int64)
	out = table[k + LEVELS]
	out[np.isnan(pix)] = NAN_C
	out[pix == np.inf] = PINF_C
	out[pix == -np.inf] = NINF_C
	return out, s


def read_png(t, path, label):
	"""(PIL image as an array, text chunks); checks the size at stat
	is what the read returned, and that PIL verifies the file."""
	st = os.stat(path)
	with open(path, "rb") as f:
		data = f.read()
	t.eq(len(data), st.st_size, label + ": stat's size is the file's")
	Image.open(io.BytesIO(data)).verify()
	im = Image.open(io.BytesIO(data))
	im.load()
	t.eq(im.mode, "RGB", label + ": RGB")
	return np.asarray(im).astype(np.int64), dict(im.text), data


def map_of(img, text):
	m = json.loads(text["stfs:map"])
	x0, y0 = m["at"]
	cy, cx = m["magnify"]
	ph, pw = m["pixels"]
	ys = y0 + np.arange(ph) * cy
	xs = x0 + np.arange(pw) * cx
	return img[np.ix_(ys, xs)], m


def check_map(t, mnt, name, values, shape, label, px=1024, complex_=False):
	img, text, _ = read_png(t, os.path.join(mnt, ".png", name + ".png"),
				label)
	got, m = map_of(img, text)
	mat = matrix(values, shape, complex_)
	pix, br, bc = reference_map(mat, px)
	t.eq(m["block"], [br, bc], label + ": blocks per pixel")
	t.eq(m["pixels"], list(pix.shape), label + ": pixels")
	want, s = expected_colours(pix)
	bad = np.argwhere((got != want).any(-1))
	t.check(bad.size == 0, "%s: %d pixels differ from the reference, "
		"first %s: got %s want %s" % (
			label, len(bad), bad[:1].tolist(),
			got[tuple(bad[0])].tolist() if bad.size else None,
			want[tuple(bad[0])].tolist() if bad.size else None))
	t.eq(float(text["stfs:scale"]), float(s), label + ": stfs:scale")
	t.eq(json.loads(text["stfs:shape"]), list(shape), label + ": shape")
	# every magnified screen pixel has its pixel's colour
	cy, cx = m["magnify"]
	x0, y0 = m["at"]
	region = img[y0:y0 + pix.shape[0] * cy, x0:x0 + pix.shape[1] * cx]
	t.check((region == np.repeat(np.repeat(want, cy, 0), cx, 1)).all(),
		label + ": the magnified map is its pixels")
	return got, want, text


def hist_reference(vals):
	v = np.asarray(vals, np.float64).reshape(-1)
	fin = v[np.isfinite(v)]
	lo, hi = fin.min(), fin.max()
	if lo == hi:
		lo, hi = lo - 0.5, hi + 0.5
	k = np.floor((fin * 0.5 - lo * 0.5) * (BINS / (hi * 0.5 - lo * 0.5)))
	k = np.clip(k, 0, BINS - 1).astype(np.int64)
	return lo, hi, np.bincount(k, minlength=BINS).tolist()


def check_hist(t, mnt, name, vals, label):
	img, text, _ = read_png(t, os.path.join(mnt, ".png",
					       name + ".hist.png"), label)
	with open(os.path.join(mnt, ".stats", name + ".json")) as f:
		stats = json.load(f)
	got = json.loads(text["stfs:stats"])
	for k, v in got.items():
		t.eq(v, stats.get(k), "%s: %s as .stats/ says" % (label, k))
	t.eq(set(got), set(stats) - {"name", "dtype"},
	     label + ": every number of .stats/")
	h = json.loads(text["stfs:hist"])
	lo, hi, counts = hist_reference(vals)
	t.eq((h["lo"], h["hi"]), (lo, hi), label + ": range")
	t.eq(h["counts"], counts, label + ": bins")
	t.eq(img.shape[:2], (420, 640), label + ": 640 x 420")
	return got


def make(d, rng):
	T = {}
	# an outlier column: |x| < 0.1 elsewhere, column 1234 8 or -8
	o = (rng.standard_normal((300, 2000)) * 0.02).astype("<f4")
	o[:, 1234] = 8 * np.where(rng.random(300) < 0.5, -1, 1)
	T["outlier"] = ("F32", [300, 2000], o)
	# a NaN block and infinities
	n = (rng.standard_normal((64, 64))).astype("<f4")
	n[10, 10] = np.nan
	n[40, 40] = np.inf
	n[50, 5] = -np.inf
	T["specials"] = ("F32", [64, 64], n)
	T["constant"] = ("BF16", [100, 100],
			 np.full((100, 100), 0x3f00, "<u2"))	# 0.5
	T["zeros"] = ("F16", [30, 20], np.zeros((30, 20), "<f2"))
	T["strip"] = ("F16", [5000],
		      rng.standard_normal(5000).astype("<f2"))
	T["cube"] = ("F32", [3, 40, 50],
		     rng.standard_normal((3, 40, 50)).astype("<f4"))
	b = (rng.standard_normal((1500, 3000)).astype("<f4").view("<u4")
	     >> 16).astype("<u2")
	T["bf16"] = ("BF16", [1500, 3000], b)
	T["f8"] = ("F8_E4M3", [64, 256],
		   rng.integers(0, 256, (64, 256), dtype=np.uint8))
	T["ints"] = ("I32", [20, 30],
		     rng.integers(-1000, 1000, (20, 30)).astype("<i4"))
	T["complex"] = ("C64", [8, 8],
			rng.standard_normal((8, 16)).astype("<f4"))
	T["a"] = ("F32", [4], np.arange(4, dtype="<f4"))
	T["a.hist"] = ("F32", [4], -np.arange(4, dtype="<f4"))
	p = os.path.join(d, "pictures.safetensors")
	gen.write_safetensors(p, [(k, v[0], v[1], v[2]) for k, v in T.items()])
	return T, p


def values_of(dt, shape, arr):
	raw = np.ascontiguousarray(arr).tobytes()
	n = int(np.prod(shape)) if shape else 1
	if dt in ("F32", "C64"):
		return np.frombuffer(raw, "<f4").astype(np.float64)
	if dt == "F16":
		return np.frombuffer(raw, "<f2").astype(np.float64)
	if dt == "I32":
		return np.frombuffer(raw, "<i4").astype(np.float64)
	return decode(dt, raw, n).astype(np.float64)


def check_made(t, T, p):
	with harness.Mount(t, p) as m:
		names = sorted(os.listdir(os.path.join(m.path, ".png")))
		want = []
		for k in T:
			base = "a%2Ehist" if k == "a.hist" else k
			want += [base + ".png", base + ".hist.png"]
		t.eq(names, sorted(want), ".png/: two pictures per tensor, "
		     "a.hist's named apart from a's histogram")
		for k, (dt, shape, arr) in T.items():
			if k in ("a", "a.hist"):
				continue
			v = values_of(dt, shape, arr)
			got, want_c, text = check_map(
				t, m.path, k, v, shape, k,
				complex_=(dt == "C64"))
			check_hist(t, m.path, k, v, k + " histogram")
		# the made cases
		got, _, _ = check_map(t, m.path, "outlier",
				      values_of(*T["outlier"]), [300, 2000],
				      "outlier again")
		col = 1234 // 2
		ext = {STEP_COLOURS[LEVELS], STEP_COLOURS[-LEVELS]}
		t.check(all(tuple(c) in ext for c in got[:, col]),
			"outlier: its pixel column is all the extreme colours")
		t.check(not any(tuple(c) in ext for c in
				got[:, :col].reshape(-1, 3)),
			"outlier: no other column reaches them")
		got, _, _ = check_map(t, m.path, "specials",
				      values_of(*T["specials"]), [64, 64],
				      "specials again")
		t.eq(tuple(got[10, 10]), NAN_C, "specials: the NaN's colour")
		t.eq(tuple(got[40, 40]), PINF_C, "specials: +Inf's colour")
		t.eq(tuple(got[50, 5]), NINF_C, "specials: -Inf's colour")
		others = {tuple(c) for c in got.reshape(-1, 3)} - \
			{NAN_C, PINF_C, NINF_C}
		t.check(others <= set(STEP_COLOURS.values()) and
			not ({NAN_C, PINF_C, NINF_C} & set(STEP_COLOURS.values())),
			"specials: NaN and Inf colours no finite value gets")
		for k in ("constant", "zeros"):
			img, text, _ = read_png(t, os.path.join(
				m.path, ".png", k + ".png"), k)
			g, _ = map_of(img, text)
			t.eq(len({tuple(c) for c in g.reshape(-1, 3)}), 1,
			     k + ": a constant tensor is one colour")
		h = check_hist(t, m.path, "specials",
			       values_of(*T["specials"]), "specials hist")
		t.eq((h["nan"], h["+inf"], h["-inf"]), (1, 1, 1),
		     "specials: the histogram counts NaN and the infinities")
		# the picture's own texts
		_, text, _ = read_png(t, os.path.join(m.path, ".png",
						      "cube.png"), "cube")
		t.eq(json.loads(text["stfs:map"])["rows"], 120,
		     "cube: 3 x 40 rows merged")
		t.eq(text["Title"], "cube", "Title is the name")
		t.eq(text["stfs:dtype"], "F32", "stfs:dtype")
		# a.hist's pictures and a's are apart
		for name, base in (("a", "a"), ("a.hist", "a%2Ehist")):
			_, text, _ = read_png(t, os.path.join(
				m.path, ".png", base + ".png"), name)
			t.eq(text["Title"], name, base + ".png is " + name)
			_, text, _ = read_png(t, os.path.join(
				m.path, ".png", base + ".hist.png"), name)
			t.eq(text["Title"], name, base + ".hist.png is " + name)
		t.check(not os.path.exists(os.path.join(m.path, ".png",
							"nope.png")),
			"no picture of a tensor that is not there")
	# -o png_px: a smaller map, the same rule
	with harness.Mount(t, p, args=["-o", "png_px=100"]) as m:
		check_map(t, m.path, "bf16", values_of(*T["bf16"]), [1500, 3000],
			  "bf16 px=100", px=100)
	# -o tree: the pictures follow the directories
	with harness.Mount(t, p, args=["-o", "tree"]) as m:
		t.check(os.path.isfile(os.path.join(m.path, ".png", "a",
						    "hist.png")) and
			os.path.isfile(os.path.join(m.path, ".png", "a",
						    "__tensor__.png")),
			"-o tree: .png/a/hist.png and .png/a/__tensor__.png")


def check_gguf(t, d, rng):
	raw = gguf_gen.random_bytes("Q4_K", [8, 512], rng)
	p = os.path.join(d, "q.gguf")
	gguf_gen.write(p, [("blk.0.w", "Q4_K", [8, 512], raw)])
	vals = gref.dequantize("Q4_K", raw).astype(np.float64).reshape(-1)
	with harness.Mount(t, p) as m:
		check_map(t, m.path, "blk.0.w", vals, [8, 512], "Q4_K")
		check_hist(t, m.path, "blk.0.w", vals, "Q4_K histogram")


def check_fp8(t, d, rng):
	codes = rng.integers(0, 0x7e, (200, 300), dtype=np.uint8)
	sc = (rng.random((2, 3)) + 0.5).astype(np.float32)
	p = os.path.join(d, "fp8")
	os.makedirs(p)
	gen.write_safetensors(os.path.join(p, "model.safetensors"), [
		("l.weight", "F8_E4M3", [200, 300], codes),
		("l.weight_scale_inv", "F32", [2, 3], sc)])
	v = decode("F8_E4M3", codes.tobytes(), codes.size).reshape(200, 300)
	s = np.repeat(np.repeat(sc, 128, 0), 128, 1)[:200, :300]
	vals = (v.astype(np.float32) * s.astype(np.float32)).astype(np.float64)
	with harness.Mount(t, p) as m:
		check_map(t, m.path, "l.weight", vals, [200, 300],
			  "FP8 block weight")
		check_map(t, os.path.join(m.path, ".dequant"), "l.weight", vals,
			  [200, 300], ".dequant/.png/ FP8 weight")
		check_hist(t, m.path, "l.weight", vals, "FP8 histogram")


def check_inspect(t, d, T, p):
	"""stfs-inspect --png: the mount's files, without a mount; --diff
	--png DIR: |a - b| of each tensor that differs."""
	out = os.path.join(d, "out.png")
	with harness.Mount(t, p) as m:
		for name, hist in (("bf16", False), ("specials", True),
				   ("cube", False)):
			if os.path.exists(out):
				os.unlink(out)
			args = [harness.STFS_INSPECT, "--png", name, p, "-o", out]
			if hist:
				args.insert(3, "--histogram")
			r = harness.run(args, timeout=120)
			t.eq(r.returncode, 0, "--png %s: exit 0 (%r)" % (
				name, r.stderr[:300]))
			suffix = ".hist.png" if hist else ".png"
			with open(out, "rb") as f, open(os.path.join(
					m.path, ".png", name + suffix), "rb") as g:
				t.check(f.read() == g.read(), "--png %s%s: the mount's "
					".png/ file byte for byte" % (
						name, " --histogram" if hist else ""))
	r = harness.run([harness.STFS_INSPECT, "--png", "cube", p, "-o", out])
	t.check(r.returncode == 2 and b"--force" in r.stderr,
		"--png -o an existing file: refused, --force named")
	r = harness.run([harness.STFS_INSPECT, "--png", "cube", "--force", p,
			 "-o", out])
	t.eq(r.returncode, 0, "--png --force replaces it")
	os.unlink(out)
	r = harness.run([harness.STFS_INSPECT, "--png", "nope", p, "-o", out])
	t.check(r.returncode == 2 and b"no tensor named" in r.stderr,
		"--png of a tensor that is not there: one line, exit 2")
	r = harness.run([harness.STFS_INSPECT, "--png", "bf16", p])
	t.eq(r.returncode, 2, "--png without -o: usage error")
	# --diff --png: B has one tensor changed in a block of values
	b = dict(T)
	dt, shape, arr = T["cube"]
	arr2 = np.array(arr, copy=True)
	arr2[1, 10:20, 5:9] += 3
	b["cube"] = (dt, shape, arr2)
	q = os.path.join(d, "b.safetensors")
	gen.write_safetensors(q, [(k, v[0], v[1], v[2]) for k, v in b.items()])
	pd = os.path.join(d, "diffs")
	r = harness.run([harness.STFS_INSPECT, "--diff", "--png", pd, p, q],
			timeout=120)
	t.eq(r.returncode, 1, "--diff --png: exit 1 (different): %r"
	     % r.stderr[:300])
	t.eq(sorted(os.listdir(pd)), ["cube.png"],
	     "--diff --png: one picture, of the tensor that differs")
	img, text, _ = read_png(t, os.path.join(pd, "cube.png"), "|a-b|")
	got, _ = map_of(img, text)
	diff = np.abs(values_of(*b["cube"]) - values_of(*T["cube"]))
	pix, _, _ = reference_map(matrix(diff, shape))
	want, s = expected_colours(pix)
	t.check((got == want).all(), "--diff --png: the map is |a - b| by the "
		"rule")
	t.eq(float(text["stfs:scale"]), float(s), "|a-b|: its scale")


def main(t):
	d = harness.tmpdir("png")
	rng = np.random.default_rng(37)
	T, p = make(d, rng)
	check_made(t, T, p)
	check_inspect(t, d, T, p)
	check_gguf(t, d, rng)
	check_fp8(t, d, rng)


if __name__ == "__main__":
	harness.main("int-png", main)
