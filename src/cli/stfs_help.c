/* stfs_help.c - what `stfs --help` prints: the options that apply to
 * stfs, its own and FUSE's, grouped by what they are about.
 */
#include <stdio.h>

#include "cli/stfs_help.h"
#ifdef STFS_HAVE_HTTP
#include "source/http/http_options.h"
#endif

void
stfs_help(FILE *out, unsigned readahead_kib)
{
	fputs(
"usage: stfs [options] SOURCE MOUNTPOINT\n"
"       mount.stfs SOURCE MOUNTPOINT [-f] [-o options]\n"
"\n"
"Mount a safetensors model read-only as a directory of plain files.\n"
"SOURCE is a .safetensors file, a PyTorch checkpoint (pytorch_model.bin,\n"
".pt: read without running its pickle), a GGUF file (llama.cpp; a split\n"
"set by any of its parts, NAME-00001-of-00003.gguf), a\n"
"model.safetensors.index.json or pytorch_model.bin.index.json of a sharded\n"
"set, a directory holding one of them, a Hugging Face hub cache repo\n"
"(models--ORG--NAME: its refs/main snapshot) or snapshot, Ollama's store\n"
"(ollama:, or ollama:MODEL[:TAG] for one model; $OLLAMA_MODELS), an\n"
"http(s):// URL, hf:// or s3:// (below).  It is validated as strictly as\n"
"the reference reader before anything is mounted.\n"
"\n"
"Layout of MOUNTPOINT:\n"
"  NAME                 one per tensor: exactly its bytes (mmap works)\n"
"  NAME.json            its description: name, dtype, shape, data_offsets,\n"
"                       nbytes, numel, offset, numpy, decode, source\n"
"  __metadata__.json    the model's __metadata__\n"
"  __summary__.json     totals: tensors, bytes, parameters per dtype, ...\n"
"  __shards__/          sharded sets: SHARD.json, each shard's totals and\n"
"                       own __metadata__\n"
"  .npy/NAME.npy        NPY file for np.load (mmap too): the bytes, or for\n"
"                       BF16, F8_*, F6_*, F4 their exact float32 decoding,\n"
"                       for every GGUF quantized type ggml's float32\n"
"                       dequantization (F32 in .safetensors/ too); for a\n"
"                       quantized weight (FP8 with scales, bitsandbytes)\n"
"                       the values it stands for\n"
"  .txt/NAME.txt        the values as text, one row of the last dimension\n"
"                       per line, fixed width (np.loadtxt reads it back)\n"
"  .safetensors/        model.safetensors (every shard as one file),\n"
"                       PREFIX.safetensors per module (names kept) and\n"
"                       strip/PREFIX.safetensors (\"PREFIX.\" removed)\n"
"  .stats/NAME.json     min, max, mean, std, NaN/Inf counts of the values\n"
"                       (computed on first read, then kept)\n"
"  .png/NAME.png        a heatmap of the values (largest magnitude per\n"
"                       block, sign kept); NAME.hist.png their histogram\n"
"  .html/index.html     the model as a page for a browser (modules, shapes,\n"
"                       statistics, thumbnails loaded when in view)\n"
"  .stfs/stats.json     per source: requests, bytes, cache hits, errors\n"
"  .files/              the model's folder as at the source, for loaders\n"
"                       (from_pretrained(\"MNT/.files\")): its shards and\n"
"                       index, config.json, tokenizer files, README.md;\n"
"                       at a tree's root (a diffusers pipeline) the\n"
"                       tree's whole folder\n"
"  .dequant/            models with quantized weights (FP8 with scales,\n"
"                       MXFP4, GPTQ, AWQ, compressed-tensors int4/int8,\n"
"                       NF4, NVFP4, PyTorch qint8): the model as its\n"
"                       framework loads it, each such weight its float32\n"
"                       values (.npy/, .safetensors/, ... of its own;\n"
"                       .dequant/.files/ loads as the plain model);\n"
"                       __summary__.json's \"quantization\" names it\n"
"  (.npy/, .txt/, .stats/, .png/, .html/, .safetensors/, .stfs/, .files/ and\n"
"  .dequant/ are not listed unless -o views=visible: ls -a, du, cp -r do\n"
"  not see them; open them by path)\n"
"Tensor files carry xattrs user.safetensors.{name,dtype,shape,offset,\n"
"nbytes} (getfattr -d).\n"
"NAME is the tensor name with '/', '%', control bytes and a few others\n"
"written %XX (man stfs, File names); the sidecar keeps the exact name.\n"
"\n", out);
	/* Two literals: ISO C promises 4,095 bytes in one. */
	fprintf(out,
"stfs options:\n"
"  -o tree              split names at '.' into directories: a.b.c is\n"
"                       a/b/c (sidecar a/b/c.json); a.b next to a.b.c is\n"
"                       a/b/__tensor__; .npy/ and .txt/ follow (man stfs)\n"
"  -o flat              one flat directory (the default); the last of tree\n"
"                       and flat wins, so a command line undoes fstab's\n"
"  -o views=WHEN        .npy/ .txt/ .stats/ .png/ .html/ .safetensors/\n"
"                       .stfs/ .files/ .dequant/:\n"
"                       hidden (default: not listed, so du, cp -r, tar,\n"
"                       find see only the model; reachable by path),\n"
"                       visible (listed), off\n"
"  -o png_px=N          .png/ heatmaps: at most N pixels a side, 16-8192\n"
"                       (default 1024)\n"
"  -o png_cache=MiB     .png/ pictures kept in memory, 1-65536 (default\n"
"                       128; the least recently read are dropped)\n"
"  -o readahead=KiB     kernel readahead of the mount, 0-65536 (default %u;\n"
"                       0 keeps the kernel's 128); needs root, else ignored\n"
"  -o uid=N,gid=N       owner of the files, 0-4294967294 (default: the\n"
"                       source's)\n"
"  -q, --quiet          no progress line: on a terminal, a SOURCE that\n"
"                       takes more than a second to open says what it\n"
"                       waits for (files of total, bytes, rate, time left)\n"
"  -h, --help           this text\n"
"  -V, --version        print the version\n"
"\n",
		readahead_kib);
	/* libfuse's own help (fuse_cmdline_help, fuse_lowlevel_help) would
	 * repeat -h and -V and list -o clone_fd, which stfs always sets:
	 * what of FUSE applies to stfs is said here. */
	fputs(
"FUSE options:\n"
"  -f                   stay in the foreground (as mount.stfs: fake, below)\n"
"  -d, -o debug         log every FUSE request to stderr (implies -f)\n"
"  -s                   answer requests on one thread\n"
"  -o max_threads=N     most threads answering requests (default 10)\n"
"  -o allow_other       let other users in; a user other than root needs\n"
"                       user_allow_other in /etc/fuse.conf\n"
"  -o allow_root        let root in as well as the user who mounted\n"
"  -o auto_unmount      unmount when the daemon dies (killed, crashed):\n"
"                       no stale \"Transport endpoint is not connected\"\n"
"                       mount point; recommended in fstab\n"
"\n", out);
#ifdef STFS_HAVE_HTTP
	fprintf(out,
"http(s):// sources (defaults from STFS_HTTP_* variables; see\n"
STFS_DOCDIR "/docs/remote.md):\n"
"  -o header_file=PATH  request headers, \"Name: value\" per line, or a bare\n"
"                       token for \"Authorization: Bearer\" (never logged)\n"
"  -o ca_file=PATH      CA bundle (PEM) instead of the system store\n"
"  -o insecure          do not verify TLS certificates\n"
"  -o http_no_validator mount a server that sends neither ETag nor\n"
"                       Last-Modified (a change of the file during the\n"
"                       mount could not be seen: reads could mix versions)\n"
"  -o http_cache_mb=N   memory for blocks, 1-65536 (default %u with the\n"
"                       disk cache, read-ahead beyond it waiting on the\n"
"                       disk; %u without)\n"
"  -o http_timeout=S    the longest an attempt waits to connect or for a\n"
"                       byte, 1-3600 (default %u; never a limit on a whole\n"
"                       transfer)\n"
"  -o http_tries=N      a read fails after N x http_timeout without\n"
"                       progress, N 1-100 (default %u)\n"
"  -o http_readahead_mb=N  largest read-ahead window, 1-4096 (default %u)\n"
"  -o http_connections=N   most requests in flight, 1-64 (default: as many\n"
"                       as raise the throughput, up to %u)\n"
"  -o max_throughput=RATE  cap on bytes/s over all connections, e.g. 200M\n"
"                       (K, M, G: powers of 1024; default none)\n"
"  -o http_min_rate=RATE   a transfer slower than RATE bytes/s over %u x\n"
"                       http_timeout is a stall (default 1K; 0: none)\n"
"  -o cache=on|off      keep fetched blocks on disk (default on)\n"
"  -o cache_dir=DIR     disk cache (default $XDG_CACHE_HOME/stfs or\n"
"                       ~/.cache/stfs), shared by mounts\n"
"  -o cache_max=SIZE    disk cache limit, e.g. 10G (default), 512M\n"
"\n",
		HTTP_DEFAULT_CACHE_MB_DISK, HTTP_DEFAULT_CACHE_MB,
		HTTP_DEFAULT_TIMEOUT_S, HTTP_DEFAULT_TRIES,
		HTTP_DEFAULT_READAHEAD_MB, HTTP_MAX_CONNECTIONS,
		HTTP_MIN_RATE_STALLS);
	fputs(
"hf://ORG/NAME[@REVISION][/SUBFOLDER]: a model on the Hugging Face Hub,\n"
"pinned to one commit at mount.  HF_ENDPOINT, the token from HF_TOKEN or\n"
"$HF_HOME/token (sent to the endpoint only), the local hub cache\n"
"(HF_HUB_CACHE) and HF_HUB_OFFLINE=1 work as in huggingface_hub.\n"
"\n", out);
#endif
#ifdef STFS_HAVE_S3
	fprintf(out,
"s3://BUCKET/KEY, s3://BUCKET/PREFIX/, s3://BUCKET/ (AWS_* variables and\n"
"~/.aws files as the AWS CLI reads them; AWS_ENDPOINT_URL for MinIO, R2...):\n"
"  -o s3_anonymous      unsigned requests, for public buckets\n"
"\n"
"A fleet's shared cache, for http(s)://, hf:// and s3:// sources (defaults\n"
"from STFS_SHARED_CACHE* variables; see remote.md, \"The shared cache\"):\n"
"  -o shared_cache=s3://BUCKET/PREFIX  ask this bucket for a block before the\n"
"                       origin, put there what the origin sent (any\n"
"                       S3-compatible store; never a dependency)\n"
"  -o shared_cache_key=FILE  the fleet's secret (16+ bytes, the same on\n"
"                       every node) that signs the blocks: required\n"
"  -o shared_cache_profile=NAME  its credentials, region and endpoint from\n"
"                       this AWS profile (default: as for s3:// sources)\n"
"  -o shared_cache_endpoint=URL, -o shared_cache_region=REGION  its own\n"
"\n");
#endif
	fputs(
"Files are readable by whoever may read the source file (its read bits);\n"
"other users need -o allow_other as well.  The mount is always\n"
"ro,default_permissions, and runs in the background (logging to syslog)\n"
"unless -f is given.  Unmount with fusermount3 -u MOUNTPOINT, umount, or\n"
"SIGTERM to the daemon.  As mount.stfs (mount helper) -f means fake: check\n"
"SOURCE and MOUNTPOINT, mount nothing; -s, -n, -v are ignored; a local\n"
"SOURCE must be an absolute path (fstab's, mount(8)'s working directory\n"
"is not the user's).\n"
"\n"
"Exit status: 0 mounted (or valid), 1 invalid safetensors, 2 usage or\n"
"I/O error (unreadable SOURCE, unusable MOUNTPOINT, mount failed).\n"
"\n", out);
}
