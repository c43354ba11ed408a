// gguf_check.mjs FILE... - print what @huggingface/gguf reads in each GGUF
// file, as one JSON object per line: {file, metadata (with version,
// tensor_count, kv_count), tensorInfos [{name, shape (ggml's ne order),
// dtype (ggml's number), offset}], tensorDataOffset}.  BigInts become
// decimal strings.  int-gguf compares it with the mount (tests/integration/
// test_gguf.py).
import { gguf } from "@huggingface/gguf";

const big = (_k, v) => (typeof v === "bigint" ? v.toString() : v);

for (const file of process.argv.slice(2)) {
	const r = await gguf(file, { allowLocalFile: true });
	const out = {
		file,
		metadata: r.metadata,
		tensorInfos: r.tensorInfos,
		tensorDataOffset: r.tensorDataOffset,
	};
	process.stdout.write(JSON.stringify(out, big) + "\n");
}
