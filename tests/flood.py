"""flood.py - names crafted to collide in an unkeyed FNV-1a table.

The table stfs used before nametab (layout.c) put a name at
fnv1a64(name) & (2^k - 1).  The low k bits of FNV-1a after each byte depend
only on the low k bits before it (xor and multiply carry upwards only), so
two 3-byte blocks that take one state to the same state make a collision
that can be chained: 16 such steps give 2^16 names, all different, whose
hashes agree in their low BITS bits (Joux's multicollision construction).
Used by tests/unit (a C twin), int-faults (mounting them) and
scripts/bench-flood (timing them against random names).
"""

import random

FNV_OFFSET = 0xcbf29ce484222325
FNV_PRIME = 0x100000001b3
ALPHABET = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
BITS = 20		# covers tables up to 2^20 slots (2^19 names)
PREFIX = b"w"


def fnv1a(data, h=FNV_OFFSET, mask=(1 << 64) - 1):
	for c in data:
		h = ((h ^ c) * FNV_PRIME) & mask
	return h


def collision_pairs(steps, bits=BITS):
	"""steps pairs of distinct 3-byte blocks; choosing either block of each
	pair gives the same low `bits` bits of FNV-1a after PREFIX."""
	mask = (1 << bits) - 1
	state = fnv1a(PREFIX, mask=mask)
	pairs = []
	for _ in range(steps):
		seen = {}
		found = None
		# (2-byte blocks never collide: the second byte only flips
		# low bits of a product that the first already fixed)
		for a in ALPHABET:
			for b in ALPHABET:
				for c in ALPHABET:
					blk = bytes((a, b, c))
					s = fnv1a(blk, state, mask)
					if s in seen:
						found = (seen[s], blk, s)
						break
					seen[s] = blk
				if found:
					break
			if found:
				break
		if not found:
			raise RuntimeError("no collision at %d bits" % bits)
		pairs.append(found[:2])
		state = found[2]
	return pairs


def crafted_names(n):
	"""n (a power of two) distinct names colliding in FNV-1a's low bits."""
	steps = max(1, (n - 1).bit_length())
	pairs = collision_pairs(steps)
	names = []
	for i in range(n):
		parts = [pairs[j][(i >> j) & 1] for j in range(steps)]
		names.append((PREFIX + b"".join(parts)).decode())
	return names


def random_names(n, seed=1):
	"""n distinct names of the same length as crafted_names(n)'s."""
	steps = max(1, (n - 1).bit_length())
	rnd = random.Random(seed)
	out = set()
	while len(out) < n:
		out.add(PREFIX.decode() + "".join(
			chr(rnd.choice(ALPHABET)) for _ in range(3 * steps)))
	return sorted(out)


def write_names(path, names):
	"""A valid safetensors file with one empty U8 tensor per name."""
	import gen
	entries = ",".join('"%s":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}'
			   % nm for nm in names)
	gen.write_raw(path, ("{" + entries + "}").encode())


if __name__ == "__main__":
	ns = crafted_names(1 << 16)
	lows = {fnv1a(x.encode()) & ((1 << BITS) - 1) for x in ns}
	print("%d names, %d distinct, %d distinct low-%d-bit hashes"
	      % (len(ns), len(set(ns)), len(lows), BITS))
