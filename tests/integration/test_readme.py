#!/usr/bin/env python3
"""int-readme: the README's ten examples, run as written against what
scripts/try leaves (issue 32), so that the README and the samples cannot
drift apart: a tensor name, a path or an option the samples do not have
fails here.

What try leaves is made as try makes it: the repository's samples/ (the
committed model.safetensors and sample.safetensors) and what samples/make.py
adds (the sharded set llama/, the checkpoints), copied to a scratch
directory W that stands for the clone: every command runs with W as its
working directory.  The command lines of the README's "Ten examples" block
run in order, each with bash, changed only as follows, each for a reason:

- /mnt/NAME becomes W/mnt/NAME and /tmp/ W/tmp/: the examples' mount
  points and files in our own directory (other tests run in parallel; /mnt
  is the machine's).
- PATH starts with stfs and stfs-inspect of the build, and python3 is
  Debian's: on a fresh Debian 12, where try installed python3-numpy.
- HOME is W/home, whose ~/.cache/huggingface/hub holds
  openai-community/gpt2 (hubsim.make_cache): example 7's hub cache.
- Example 8 needs the network: https://huggingface.co/ becomes the Hub
  look-alike on 127.0.0.1 (hubsim.py, plain HTTP: the same resolve/ URL,
  its redirect to the CDN included), and hf:// reaches it through
  HF_ENDPOINT, as huggingface_hub's would; the s3:// line reads bucket
  my-bucket of the S3 look-alike (s3srv.py: s3rver behind a proxy that
  checks every signature) through AWS_ENDPOINT_URL and keys in the
  environment, as the AWS CLI would.  The token line is a comment (a
  placeholder): not run.
- Example 10: mount(8) runs /sbin/mount.fuse.stfs, or mount.fuse3, which
  runs stfs with the shell's default PATH.  Both lines (the command, and
  the fstab line of its comment through mount --fstab) run in a private
  mount namespace where /usr/local/sbin holds the build's stfs, as
  int-modes does; the fstab line's /models/model.safetensors is the
  sample's absolute path.

Every command must exit 0, or the status EXIT gives it (an EXIT entry
that matches no README line fails too: the table cannot go stale).  Then
what they printed and copied is checked against the sources: names, the
numbers numpy and .txt/ print, the merged file's tensors, sha256, and the
bytes of every remote mount.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys

import harness
import hubsim
import s3srv
from harness import STFS, STFS_INSPECT, run

sys.path.insert(0, os.path.join(harness.SRCROOT, "samples"))
import make as samples_make  # noqa: E402

README = os.path.join(harness.SRCROOT, "README.md")
# README lines (exactly, comments after `#` dropped) that exit non-zero
EXIT = {
	"stfs-inspect --stats samples/ckpt-1200.safetensors": 1,
	"stfs-inspect --diff samples/ckpt-1100.safetensors "
	"samples/ckpt-1200.safetensors": 1,
}
AKID = "AKIAREADMETEST000001"
SECRET = "readme-secret-" + os.urandom(8).hex()
REGION = "us-east-1"


def examples():
	"""[(number, command)] of the "Ten examples" block; the fstab line
	of example 10's comment as (10, "fstab: LINE")."""
	with open(README) as f:
		text = f.read()
	sec = text.split("## Ten examples", 1)[1]
	block = sec.split("```sh\n", 1)[1].split("```", 1)[0]
	out, n = [], 0
	for line in block.splitlines():
		s = line.strip()
		m = re.match(r"# (\d+)\. ", s)
		if m:
			n = int(m.group(1))
		elif s.startswith("#") and "fuse.stfs" in s and \
				len(s[1:].split()) == 6:
			out.append((n, "fstab: " + s[1:].strip()))
		elif s and not s.startswith("#"):
			out.append((n, s))
	return out


def bare(cmd):
	"""The command without its trailing comment."""
	return re.sub(r"\s+#\s.*$", "", cmd).strip()


def make_clone(w):
	"""W/samples as try leaves it; W/home with a hub cache."""
	src = os.path.join(harness.SRCROOT, "samples")
	dst = os.path.join(w, "samples")
	shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
		"llama", "ckpt-*", "__pycache__", ".make-*"))
	before = open(os.path.join(dst, "model.safetensors"), "rb").read()
	samples_make.make(dst)
	after = open(os.path.join(dst, "model.safetensors"), "rb").read()
	return before == after


def bin_dir(w):
	"""stfs, stfs-inspect and Debian's python3 first on PATH."""
	b = os.path.join(w, "bin")
	os.makedirs(b)
	os.symlink(STFS, os.path.join(b, "stfs"))
	os.symlink(STFS_INSPECT, os.path.join(b, "stfs-inspect"))
	os.symlink("/usr/bin/python3", os.path.join(b, "python3"))
	return b


def substitute(cmd, w, sim):
	"""The paths /mnt/ and /tmp/ where they start a word."""
	cmd = re.sub(r"(^|[\s\"'=])/(mnt|tmp)/", lambda m: m.group(1) +
		     os.path.join(w, m.group(2)) + "/", cmd)
	return cmd.replace("https://huggingface.co/", sim.endpoint + "/")


def ns_script(w, line):
	"""Example 10's line in a private mount namespace whose
	/usr/local/sbin (and any installed helper) is the build's stfs; it
	mounts, lists, unmounts.  The namespace's copies of the earlier
	examples' mounts are dropped first: kept, they would keep those
	daemons serving after the host unmounts them."""
	sb = os.path.join(w, "sbin")
	os.makedirs(sb, exist_ok=True)
	if not os.path.lexists(os.path.join(sb, "stfs")):
		os.symlink(STFS, os.path.join(sb, "stfs"))
	mnt = os.path.join(w, "mnt", "m")
	helpers = "".join(
		"[ -e %s ] && mount --bind %s \"$(readlink -f %s)\"\n"
		% (h, STFS, h) for h in ("/sbin/mount.fuse.stfs",
					 "/usr/sbin/mount.fuse.stfs"))
	root = os.path.join(w, "mnt") + "/"
	return ("set -e\n"
		"findmnt -rn -o TARGET | grep '^%s' | xargs -r -n 1 umount -l\n"
		"trap 'umount -l %s 2>/dev/null || true' EXIT\n"
		"mount --bind %s /usr/local/sbin\n%s%s\n"
		"findmnt -n -o FSTYPE --mountpoint %s\nls %s\numount %s\n"
		% (root, mnt, sb, helpers, line, mnt, mnt, mnt))


def run_line(cmd, w, env):
	try:
		r = subprocess.run(["bash", "-c", cmd], cwd=w, env=env,
				   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				   stderr=subprocess.PIPE, timeout=120)
		return r.returncode, r.stdout.decode("utf-8", "replace"), \
			r.stderr.decode("utf-8", "replace")
	except subprocess.TimeoutExpired:
		return None, "", "timed out"


def bf16(b):
	return [struct.unpack("<f", b"\0\0" + b[i:i + 2])[0]
		for i in range(0, len(b), 2)]


def check_outputs(t, w, res, sim_files):
	"""What the examples printed and copied, against the sources."""
	S = harness.SrcFile(os.path.join(w, "samples", "model.safetensors"))

	def out(prefix):
		for cmd, (rc, so, se) in res.items():
			if bare(cmd).startswith(prefix):
				return so
		t.check(False, "no README line starts with %r" % prefix)
		return ""
	so = out("ls -l")
	t.check("model.embed_tokens.weight" in so and
		"lm_head.weight" in so, "ls -l lists the tensors: %r" % so)
	j = json.loads(out("cat ") or "{}")
	t.eq((j.get("dtype"), j.get("shape")), ("BF16", [256, 32]),
	     "the embeddings' sidecar")
	x = S.by_name["model.norm.weight"]
	vals = struct.unpack("<8f", S.read(x, 0, 32))
	got = [float(v) for v in out("python3 -c 'import numpy as np; print("
				     "np.fromfile").strip(" []\n").split()]
	t.check(len(got) == 8 and all(abs(a - b) <= 1e-6 * abs(b)
					 for a, b in zip(got, vals)),
		"np.fromfile of model.norm.weight: %r, want %r" % (got, vals))
	lm = S.read(S.by_name["lm_head.weight"])
	t.eq(out("sha256sum").split()[:1], [hashlib.sha256(lm).hexdigest()],
	     "sha256sum of lm_head.weight")
	t.eq(out("python3 -c 'import numpy as np; a = np.load").strip(),
	     "float32 (256, 32)", "np.load of .npy/lm_head.weight.npy")
	row = [float(v) for v in out("tail -n 1").split()]
	want = bf16(lm[-64:])
	t.check(len(row) == 32 and all(abs(a - b) <= 1e-6 * abs(b)
					  for a, b in zip(row, want)),
		".txt/: the last row of lm_head.weight: %r, want %r"
		% (row, want))
	merged = harness.SrcFile(os.path.join(w, "tmp",
					      "llama-merged.safetensors"))
	for y in S.tensors:
		t.check(merged.read(merged.by_name[y.name]) == S.read(y),
			"the merged set's %s" % y.name)
	t.eq(sorted(out("stfs -o tree").split()),
	     ["down_proj", "gate_proj", "up_proj"], "the tree's mlp/")
	t.eq(sorted(out("stfs samples/ ").split()),
	     ["__summary__.json", "ckpt-1100", "ckpt-1200", "llama", "model",
	      "sample"], "the tree of samples/")
	t.check("wte.weight" in out("stfs ~/").split(),
		"the hub cache's openai-community/gpt2")
	so = out("stfs-inspect --group")
	t.check(re.search(r"\n +3 +6,144 +12,288 +model\.layers\.0\.mlp\n", so),
		"--group=4: model.layers.0.mlp: %r" % so)
	so = out("stfs-inspect --stats")
	t.check(re.search(r"^model\.layers\.1\.mlp\.down_proj\.weight .* nan=1 "
			  r".*<-- NaN/Inf$", so, re.M),
		"--stats flags the NaN: %r" % so)
	so = out("stfs-inspect --diff")
	t.eq(sorted(re.findall(r"^bytes: (\S+):", so, re.M)),
	     sorted(samples_make.CHANGED), "--diff names the changed tensors")
	# the remote mounts serve their sources' bytes
	for mnt, files in sim_files.items():
		for name, path in files:
			G = harness.SrcFile(path)
			p = os.path.join(w, "mnt", mnt, name)
			for y in G.tensors:
				with open(os.path.join(p, y.name), "rb") as f:
					t.check(f.read() == G.read(y), "%s: %s"
						% (mnt, y.name))


def populate_s3(srv, w):
	c = srv.client(AKID)
	c.create_bucket(Bucket="my-bucket")
	for name in ("model", "sample"):
		with open(os.path.join(w, "samples", name + ".safetensors"),
			  "rb") as f:
			c.put_object(Bucket="my-bucket", Key="models/%s."
				     "safetensors" % name, Body=f.read())


def run_(t):
	w = harness.tmpdir("readme")
	for d in ("mnt", "tmp", "home"):
		os.makedirs(os.path.join(w, d))
	t.check(make_clone(w), "samples/make.py leaves the committed "
		"model.safetensors as it is")
	gpt2 = os.path.join(w, "samples", "sample.safetensors")
	with open(gpt2, "rb") as f:
		sim = hubsim.HubSim(tokens=("hf_readme",))
		repo = sim.add_repo("openai-community/gpt2", public=True)
		sha = repo.commit({"model.safetensors": f.read()})
	hubsim.make_cache(os.path.join(w, "home", ".cache", "huggingface",
				       "hub"), repo, sha)
	env = {k: v for k, v in os.environ.items()
	       if not k.startswith(("AWS_", "HF_"))}
	env.update(PATH=bin_dir(w) + ":" + os.environ["PATH"],
		   HOME=os.path.join(w, "home"), AWS_ACCESS_KEY_ID=AKID,
		   AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION=REGION)
	lines = examples()
	t.eq(sorted({n for n, _ in lines}), list(range(11)),
	     "ten examples (and the mount points' line)")
	for k in EXIT:
		t.check(sum(bare(c) == k for _, c in lines) == 1,
			"EXIT's %r is a README line" % k)
	res = {}
	sim.start()
	try:
		with s3srv.S3(os.path.join(w, "s3"), {AKID: (SECRET, None)},
			      region=REGION) as srv:
			populate_s3(srv, w)
			env.update(HF_ENDPOINT=sim.endpoint,
				   AWS_ENDPOINT_URL=srv.endpoint)
			for n, cmd in lines:
				c = substitute(cmd, w, sim)
				if n == 10:
					if cmd.startswith("fstab: "):
						c = fstab_line(c[7:], w)
					c = "unshare --mount --propagation private " \
					    "bash -c %s" % shell_quote(
						    ns_script(w, c))
				rc, so, se = run_line(c, w, env)
				res[cmd] = (rc, so, se)
				want = EXIT.get(bare(cmd), 0)
				t.check(rc == want, "example %d: `%s` exits %r, "
					"want %d; stderr: %s" % (n, cmd, rc, want,
								  se.strip()))
				if n == 10:
					t.check(so.startswith("fuse.stfs\n") and
						"model.embed_tokens.weight" in so,
						"example 10: `%s` mounted the model "
						"(%r)" % (cmd, so[:200]))
			check_outputs(t, w, res, {
				"g": [("", gpt2)], "hf": [("", gpt2)],
				"s3": [("model", os.path.join(
					w, "samples", "model.safetensors")),
				       ("sample", gpt2)]})
	finally:
		sim.stop()
		unmount_all(w)


def fstab_line(line, w):
	"""mount --fstab on a file holding the README's fstab line, its
	source the sample's absolute path."""
	f = line.split()
	f[0] = os.path.join(w, "samples", "model.safetensors")
	tab = os.path.join(w, "fstab")
	with open(tab, "w") as fh:
		fh.write(" ".join(f) + "\n")
	return "mount --fstab %s %s" % (tab, f[1])


def shell_quote(s):
	return "'" + s.replace("'", "'\\''") + "'"


def unmount_all(w):
	root = os.path.join(w, "mnt")
	for d in sorted(os.listdir(root)):
		p = os.path.join(root, d)
		pids = harness.daemon_pids(p)
		harness.force_unmount(p)
		for pid in pids:
			if not harness.wait_gone(pid):
				os.kill(pid, signal.SIGKILL)


harness.main("int-readme", run_)
