#!/usr/bin/env python3
"""int-names: tensor names that are not file names ("", "/", "a/b", "..",
".hidden", "x.json", "__summary__", NUL and control bytes, non-ASCII, 300
bytes, 64 KiB) are encoded per the contract, round-trip through the
sidecar's "name", and every tensor is reachable."""

import errno
import json
import os

import harness
from harness import gen


def run(t):
	src = harness.gen_file("oddnames")
	with harness.Mount(t, src) as m:
		S = harness.verify_tree(t, src, m.path)
		listing = os.listdir(m.path)
		seen = set()
		for f in listing:
			if f in ("__metadata__.json", "__summary__.json"):
				continue
			b = f.encode("utf-8", "surrogateescape")
			t.check(len(b) <= 255 and b"/" not in b and b"\0" not in b,
				"file name %r is a valid name" % f[:60])
			if f.endswith(".json"):
				data = f[:-5]
				t.check(data in listing, "sidecar %r has its data file"
					% f[:60])
				continue
			t.check(len(b) <= 250, "encoded name %r <= 250 bytes" % f[:60])
			if f in harness.VIEW_DIRS:
				continue
			t.check(not f.startswith("."), "no hidden file: %r" % f[:60])
			with open(os.path.join(m.path, f + ".json"), "rb") as fh:
				name = json.loads(fh.read().decode("utf-8"))["name"]
			seen.add(name)
			t.eq(f, harness.encode_name(name), "encoding of %r"
			     % harness.short(name, 60))
			dec = harness.decode_name(f)
			if dec is None:
				t.check(len(f.encode()) > 200 and "%~" in f,
					"hashed name form: %r" % f[:60])
				t.check(name.encode().startswith(
					harness.decode_name(f.split("%~")[0]).encode()),
					"hashed name's prefix decodes to the name's start")
			else:
				t.eq(dec, name, "decode(%r)" % f[:60])
		t.eq(seen, {x.name for x in S.tensors}, "every tensor reachable "
		     "through a sidecar name")

		# the spelled-out cases of the contract
		for name, f in [("", "%"), ("/", "%2F"), ("a/b", "a%2Fb"),
				("..", "%2E."), (".", "%2E"), (".hidden", "%2Ehidden"),
				("x.json", "x%2Ejson"), ("__summary__", "%5F_summary__"),
				("100%", "100%25"), ("nul\x00inside", "nul%00inside"),
				("模型.权重", "模型.权重"), ("del\x7f", "del%7F"),
				("__metadata__.json", "__metadata__%2Ejson")]:
			p = os.path.join(m.path, f)
			ok = os.path.isfile(p)
			t.check(ok, "tensor %r is the file %r" % (name, f))
			if ok:
				with open(p, "rb") as fh:
					t.eq(fh.read(), S.read(S.by_name[name]),
					     "bytes of %r" % name)
		# raw names do not resolve to anything else
		for raw in ("a/b", "trailing/"):
			try:
				os.stat(os.path.join(m.path, raw))
				t.check(False, "raw %r does not resolve" % raw)
			except OSError as e:
				t.check(e.errno in (errno.ENOENT, errno.ENOTDIR),
					"raw %r: ENOENT/ENOTDIR, got %s" % (raw, e))
		# lowercase escape is not an alias
		t.check(not os.path.exists(os.path.join(m.path, "a%2fb")),
			"a%2fb (lowercase) is not an alias of a%2Fb")
		# long names
		for name in (gen.LONG_A, "Z" * 65536):
			f = harness.encode_name(name)
			t.check(os.path.isfile(os.path.join(m.path, f)),
				"%d-byte name reachable as %r" % (len(name), f[:30]))
		# long file names that do not exist give ENOENT, not an error
		try:
			os.stat(os.path.join(m.path, "x" * 255))
			t.check(False, "255-byte missing name")
		except OSError as e:
			t.eq(e.errno, errno.ENOENT, "255-byte missing name errno")


harness.main("int-names", run)
