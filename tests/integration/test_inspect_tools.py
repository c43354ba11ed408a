#!/usr/bin/env python3
"""int-inspect-tools: stfs-inspect's inspection tools (issue 17).

--tensors with bytes, --sort and --group are checked against the header
read independently here (harness.SrcFile); group sums must equal the
summary's totals."""

import json
import os

import harness
import gen_sharded
from harness import STFS_INSPECT, run


def inspect(t, args, label, want_rc=0):
	r = run([STFS_INSPECT] + args)
	t.eq(r.returncode, want_rc, "%s: exit status (stderr %r)"
	     % (label, r.stderr[:300]))
	return r


def inspect_json(t, args, label):
	r = inspect(t, ["--json"] + args, label)
	try:
		return json.loads(r.stdout.decode("utf-8"))
	except ValueError as e:
		t.check(False, "%s: output is JSON: %s" % (label, e))
		return {}


def src_tensors(path):
	"""[(shard index, SrcTensor, shard name)] of a file or an index."""
	if path.endswith(".json"):
		with open(path) as f:
			wm = json.load(f)["weight_map"]
		names = sorted(set(wm.values()))
		out = []
		for i, s in enumerate(names):
			S = harness.SrcFile(os.path.join(os.path.dirname(path), s))
			out += [(i, x, s) for x in S.tensors]
		return out
	return [(0, x, None) for x in harness.SrcFile(path).tensors]


def group_key(name, depth):
	parts = name.split(".")
	if len(parts) == 1:
		return name
	if depth and depth < len(parts) - 1:
		return ".".join(parts[:depth])
	return ".".join(parts[:-1])


def check_tensors_and_groups(t, path, label):
	ts = src_tensors(path)
	summ = inspect_json(t, [path], label)
	by_offset = [x.name for _, x, _ in sorted(
		ts, key=lambda s: (s[0], s[1].begin, s[1].end))]
	by_name = sorted((x.name for _, x, _ in ts),
			 key=lambda n: n.encode("utf-8"))
	by_size = [x.name for _, x, _ in sorted(
		ts, key=lambda s: (-s[1].nbytes, s[1].name.encode("utf-8")))]
	info = {x.name: (x, s) for _, x, s in ts}
	for key, want in (("offset", by_offset), ("name", by_name),
			  ("size", by_size)):
		j = inspect_json(t, ["--tensors", "--sort=" + key, path],
				 "%s --sort=%s" % (label, key))
		tl = j.get("tensor_list", [])
		got = [x.get("name") for x in tl]
		if key == "offset":
			t.eq(got, want, "%s: --sort=offset order" % label)
		elif key == "name":
			t.eq(got, want, "%s: --sort=name order" % label)
		else:
			# equal sizes may come in any stable order: compare sizes
			t.eq([info[n][0].nbytes for n in got if n in info],
			     [info[n][0].nbytes for n in want],
			     "%s: --sort=size order" % label)
			t.eq(sorted(got), sorted(want), "%s: --sort=size names" % label)
		for x in tl:
			s = info.get(x.get("name"))
			if not t.check(s is not None, "%s: listed tensor %r exists"
				       % (label, x.get("name"))):
				continue
			t.eq(x.get("bytes"), s[0].nbytes, "%s: %s bytes" % (label, s[0].name))
			t.eq(x.get("data_offsets"), [s[0].begin, s[0].end],
			     "%s: %s data_offsets" % (label, s[0].name))
		# text: one line per tensor ending in the byte count (and shard)
		r = inspect(t, ["--tensors", "--sort=" + key, path], label + " text")
		lines = r.stdout.decode("utf-8", "replace").splitlines()
		tail = lines[len(lines) - len(ts):] if ts else []
		for line, x in zip(tail, tl):
			f = line.split()
			n = f[-2] if info.get(x["name"], (None, None))[1] else f[-1]
			t.eq(n, str(x["bytes"]), "%s: text line %r bytes" % (label, line))

	for depth in (None, 1, 2, 3, 4):
		arg = "--group" if depth is None else "--group=%d" % depth
		j = inspect_json(t, [arg, path], "%s %s" % (label, arg))
		groups = j.get("groups", [])
		want = {}
		for _, x, _ in ts:
			k = group_key(x.name, depth)
			g = want.setdefault(k, [0, 0, 0])
			g[0] += 1
			g[1] += x.numel
			g[2] += x.nbytes
		got = {g.get("group"): [g.get("tensors"), g.get("parameters"),
					g.get("bytes")] for g in groups}
		t.eq(got, want, "%s %s: groups" % (label, arg))
		t.eq(len(groups), len(want), "%s %s: one entry per group" % (label, arg))
		t.eq(sum(g.get("tensors", 0) for g in groups), summ.get("tensors"),
		     "%s %s: group tensors sum to the summary's" % (label, arg))
		t.eq(sum(g.get("parameters", 0) for g in groups),
		     summ.get("parameters_total"),
		     "%s %s: group parameters sum to the summary's" % (label, arg))
		t.eq(sum(g.get("bytes", 0) for g in groups), summ.get("bytes"),
		     "%s %s: group bytes sum to the summary's" % (label, arg))
		first = {}
		for sh, x, _ in ts:
			k = group_key(x.name, depth)
			first[k] = min(first.get(k, (sh, x.begin, x.end)),
				       (sh, x.begin, x.end))
		got_keys = [g.get("group") for g in groups]
		t.eq([first.get(k) for k in got_keys], sorted(first.values()),
		     "%s %s: groups in file order of their first tensor"
		     % (label, arg))
		jn = inspect_json(t, [arg, "--sort=name", path], label + " name")
		t.eq([g.get("group") for g in jn.get("groups", [])],
		     sorted(want, key=lambda k: k.encode("utf-8")),
		     "%s %s --sort=name: groups by name" % (label, arg))
		js = inspect_json(t, [arg, "--sort=size", path], label + " size")
		sizes = [g.get("bytes") for g in js.get("groups", [])]
		t.eq(sizes, sorted(sizes, reverse=True),
		     "%s %s --sort=size: largest first" % (label, arg))
		# text: the total line equals the summary
		r = inspect(t, [arg, path], "%s %s text" % (label, arg))
		last = r.stdout.decode("utf-8", "replace").splitlines()[-1].split()
		t.eq(last[:3], ["{:,}".format(summ.get("tensors", 0)),
				"{:,}".format(summ.get("parameters_total", 0)),
				"{:,}".format(summ.get("bytes", 0))],
		     "%s %s: text total line %r" % (label, arg, last))


def run_(t):
	d = harness.tmpdir("inspect-tools")
	files = [harness.SAMPLE]
	for kind in ("alldtypes", "oddnames", "empty"):
		files.append(harness.gen_file(kind, d))
	idx, _ = gen_sharded.write_sharded(os.path.join(d, "sharded"),
					   gen_sharded.mixed_tensors(60), 3)
	files.append(idx)
	for p in files:
		check_tensors_and_groups(t, p, os.path.basename(p))

	# bad option values: exit 2 with one line
	for args in (["--sort=bogus"], ["--group=0"], ["--group=x"]):
		r = inspect(t, args + [harness.SAMPLE], " ".join(args), want_rc=2)
		t.eq(r.stderr.decode().count("\n"), 1, "%s: one line on stderr" % args)


if __name__ == "__main__":
	harness.main("int-inspect-tools", run_, mounts=False)
