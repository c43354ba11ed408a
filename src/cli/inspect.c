/* inspect.c - stfs-inspect: the command line and the dispatch to one mode
 * (inspect_summary.c by default; one file per further mode).  Validates
 * and summarizes safetensors models without mounting anything.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli/inspect.h"
#include "base/jsonmem.h"
#include "cli/addrspace.h"
#include "cli/nofile.h"
#include "model/provider.h"
#ifdef STFS_HAVE_HTTP
#include "source/http/source_http.h"
#endif

static void
usage(FILE *out)
{
	fputs("usage: stfs-inspect [--json] [--tensors] [--sort=KEY] [--group[=DEPTH]]\n"
	      "                    [--format=tsv|csv] [--quiet] [--dequant] SOURCE...\n"
	      "       stfs-inspect --merge SOURCE -o OUT.safetensors [--force]\n"
	      "       stfs-inspect --extract PREFIX [--strip] SOURCE -o OUT.safetensors\n"
	      "       stfs-inspect --stats [--json] [--quiet] [--no-dequant] SOURCE\n"
	      "       stfs-inspect --diff [--json] [--quiet] [--no-dequant]\n"
	      "                    [--atol=X] [--rtol=Y] A B\n"
	      "       stfs-inspect --diff --png DIR A B\n"
	      "       stfs-inspect --png NAME [--histogram] [--no-dequant] [--force]\n"
	      "                    SOURCE -o FILE.png\n"
	      "       stfs-inspect --scan [--json] [--quiet] FILE...\n"
	      "\n"
	      "Validate a safetensors model as strictly as the reference reader and\n"
	      "summarize it: tensor count, data and header bytes, parameters (element\n"
	      "count) per dtype, and __metadata__.  Only the header is read.\n"
	      "\n"
	      "SOURCE is a .safetensors file, a PyTorch checkpoint (.bin, .pt: read\n"
	      "without running its pickle; --merge writes it as safetensors, --diff\n"
	      "compares it with its conversion), a GGUF file (llama.cpp) or split\n"
	      "set, a model.safetensors.index.json or\n"
	      "pytorch_model.bin.index.json of a sharded set, a directory, a\n"
	      "Hugging Face hub cache (its root, a\n"
	      "models--ORG--NAME repo or a snapshot), an http(s):// URL of one,\n"
	      "or hf://ORG/NAME[@REVISION][/SUBFOLDER] (a Hugging Face Hub model;\n"
	      "token from HF_TOKEN or $HF_HOME/token, see stfs-inspect(1)), or\n"
	      "s3://BUCKET/KEY, s3://BUCKET/PREFIX/, s3://BUCKET/ (AWS_* variables\n"
	      "and ~/.aws as the AWS CLI reads them; STFS_S3_ANONYMOUS=1: unsigned).\n"
	      "A directory holding several models (a folder of models, a pipeline,\n"
	      "the hub cache) gives one block per model, headed \"== PATH ==\", as\n"
	      "do several SOURCEs; --json then prints {\"models\": [...]}, each the\n"
	      "usual object plus \"path\" and \"dir\" (its directory in the mount).\n"
	      "\n",
	      out);
	/* two strings: C99 promises 4095 bytes per literal */
	fputs("  -j, --json      print one JSON object (the mount's __summary__.json)\n"
	      "  -t, --tensors   also list every tensor: name dtype shape data_offsets\n"
	      "                  bytes (with --json: a \"tensor_list\" array)\n"
	      "      --sort=KEY  order of --tensors and --group: offset (file order,\n"
	      "                  the default), name, or size (largest first);\n"
	      "                  alone it implies --tensors\n"
	      "      --group[=DEPTH]  sum tensors, parameters and bytes by dotted-name\n"
	      "                  prefix: the first DEPTH components, or without DEPTH\n"
	      "                  each tensor's module (its name minus the last\n"
	      "                  component); with --json: a \"groups\" array\n"
	      "      --format=FMT  the table of --tensors or --group alone, for\n"
	      "                  sort, awk and spreadsheets: tsv (tab-separated,\n"
	      "                  \\t \\n \\r \\\\ escaped) or csv (RFC 4180); a\n"
	      "                  header row, plain numbers, no summary\n"
	      "      --stats     numerical health: per tensor min, max, mean, std over\n"
	      "                  the finite decoded values, counts of nan, +inf, -inf,\n"
	      "                  zeros, subnormals; exit 1 when any NaN or Inf\n"
	      "      --diff      compare two SOURCEs A and B: tensors only in A, only\n"
	      "                  in B, with another dtype, shape or bytes (read and\n"
	      "                  compared up to the first difference), __metadata__\n"
	      "                  keys; tensors of another dtype and the same shape\n"
	      "                  also get the error between their values (max\n"
	      "                  |a-b|, rms); exit 0 identical, 1 different,\n"
	      "                  2 trouble\n"
	      "      --atol=X, --rtol=Y  with --diff: float tensors of one shape\n"
	      "                  whose values all have |a-b| <= X + Y |b| are\n"
	      "                  close, not different (numpy's allclose; NaN is\n"
	      "                  never close; the one not given is 0)\n"
	      "      --scan      what loading each FILE (a file, a directory of\n"
	      "                  them, a URL) with torch.load would import and call\n"
	      "                  beyond torch.load(weights_only=True): each listed\n"
	      "                  with its arguments and where the tree holds it;\n"
	      "                  safetensors and GGUF hold no code; exit 0 none,\n"
	      "                  1 found, 2 a file not read or scanned whole\n",
	      out);
	fputs("      --dequant   quantized weights (FP8 with scales, MXFP4, GPTQ,\n"
	      "                  AWQ, compressed-tensors pack-quantized,\n"
	      "                  bitsandbytes 4-bit, NVFP4, PyTorch qint8) as the\n"
	      "                  float32 tensors they stand for, under their\n"
	      "                  framework's names (the mount's .dequant/); the\n"
	      "                  default of --stats and --diff\n"
	      "      --no-dequant  the stored tensors, as they are\n"
	      "      --png=NAME  write tensor NAME's heatmap (the mount's\n"
	      "                  .png/NAME.png) to -o FILE (- for stdout);\n"
	      "                  --histogram: its histogram (.png/NAME.hist.png)\n"
	      "      --diff --png=DIR  also write, per tensor that differs and\n"
	      "                  has one shape on both sides, the heatmap of\n"
	      "                  |a-b| as DIR/NAME.png\n"
	      "  -q, --quiet     print nothing; only the exit status tells\n"
	      "      --merge     write the whole model (every shard) as one\n"
	      "                  .safetensors file: the mount's\n"
	      "                  .safetensors/model.safetensors, byte for byte\n"
	      "      --extract=PREFIX  write the tensors named PREFIX.* as one file\n"
	      "                  (.safetensors/PREFIX.safetensors)\n"
	      "      --strip     with --extract: drop \"PREFIX.\" from the names\n"
	      "                  (.safetensors/strip/PREFIX.safetensors)\n"
	      "  -o, --output=OUT  the file --merge/--extract write (- for stdout);\n"
	      "                  never one of the sources, nor an existing file\n"
	      "                  unless --force\n"
	      "      --force     let -o replace an existing file\n"
	      "      --header-file=PATH  http(s): request headers, \"Name: value\" per\n"
	      "                  line (e.g. Authorization: Bearer ...) or a bare token\n"
	      "      --ca-file=PATH      http(s): CA bundle to trust (PEM)\n"
	      "      --insecure  http(s): do not verify TLS certificates\n"
	      "  -h, --help      this text\n"
	      "  -V, --version   print the version\n"
	      "\n"
	      "Exit status: 0 valid, 1 invalid (stderr: file, the reference error\n"
	      "name such as InvalidOffset, and what is wrong), 2 usage or I/O\n"
	      "error.  --stats: 0 no NaN or Inf, 1 found, 2 error (an invalid file\n"
	      "too); --diff: 0 identical, 1 different, 2 error (as grep and cmp);\n"
	      "--scan: 0 nothing found, 1 found, 2 a file not read or scanned whole.\n",
	      out);
}

/* What a command line that cannot run gets: the usage, not the manual. */
static int
usage_error(void)
{
	fputs("usage: stfs-inspect [OPTIONS] SOURCE...\n"
	      "Try 'stfs-inspect --help' for more information.\n", stderr);
	return 2;
}

/* --atol=X, --rtol=Y: a number >= 0; 0 or -1. */
static int
parse_tol(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* Remote settings; the token file is read here, never echoed.  Also
 * for remote sources without options: a malformed STFS_HTTP_* setting is
 * reported as such here, before a listing (s3://, hf://) could take it
 * for a server that cannot be reached. */
static int
set_http(const struct inspect_opts *io, const char *header_file,
	 const char *ca_file, int insecure, struct err *e)
{
#ifdef STFS_HAVE_HTTP
	struct http_options o = { 0 };
	int i, remote = 0;

	for (i = 0; i < io->nsources; i++)
		remote |= provider_for(io->sources[i])->flags &
			  PROVIDER_REMOTE;
	if (!header_file && !ca_file && !insecure && !remote)
		return 0;
	o.header_file = header_file;
	o.ca_file = ca_file;
	o.insecure = insecure;
	return http_options_set(&o, e);
#else
	(void)io;
	(void)ca_file;
	if (!header_file && !ca_file && !insecure)
		return 0;
	(void)header_file;
	return err_set(e, ERR_USAGE, "built without HTTP support");
#endif
}

/* hf:// sources: the token comes from the Hub's conventions, never from
 * a header file (which would also reach the CDN a redirect points at);
 * TLS settings are the HTTP client's (set_http). */
static int
check_hub(const struct inspect_opts *o, const char *header_file,
	  struct err *e)
{
#ifdef STFS_HAVE_HTTP
	int i;

	for (i = 0; i < o->nsources; i++)
		if ((provider_for(o->sources[i])->flags &
		     PROVIDER_OWN_TOKEN) && header_file)
			return err_set(e, ERR_USAGE, "--header-file does not "
				       "apply to hf:// sources: give the token "
				       "with HF_TOKEN or in $HF_HOME/token");
#else
	(void)o;
	(void)header_file;
#endif
	return 0;
}

/* --group=DEPTH: 1..1000 dotted components; 0 or -1. */
static int
parse_depth(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < 1 || v > 1000)
		return -1;
	*out = (int)v;
	return 0;
}

typedef int (*inspect_mode)(const struct inspect_opts *o);

/* Record the mode an option asks for; two different modes are a usage
 * error.  0 or -1. */
static int
set_mode(inspect_mode *mode, inspect_mode want, const char *opt)
{
	if (*mode && *mode != want) {
		fprintf(stderr, "stfs-inspect: %s cannot be combined with "
			"another mode (try --help)\n", opt);
		return -1;
	}
	*mode = want;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "tensors", no_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "header-file", required_argument, NULL, 'H' },
		{ "ca-file", required_argument, NULL, 'C' },
		{ "insecure", no_argument, NULL, 'k' },
		{ "sort", required_argument, NULL, 's' },
		{ "group", optional_argument, NULL, 'g' },
		/* modes and their options: add one line each, below */
		{ "merge", no_argument, NULL, 'M' },
		{ "extract", required_argument, NULL, 'X' },
		{ "strip", no_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'o' },
		{ "stats", no_argument, NULL, 1001 },
		{ "diff", no_argument, NULL, 1002 },
		{ "dequant", no_argument, NULL, 1003 },
		{ "no-dequant", no_argument, NULL, 1004 },
		{ "force", no_argument, NULL, 1005 },
		{ "atol", required_argument, NULL, 1006 },
		{ "rtol", required_argument, NULL, 1007 },
		{ "format", required_argument, NULL, 1008 },
		{ "png", required_argument, NULL, 1009 },
		{ "histogram", no_argument, NULL, 1010 },
		{ "scan", no_argument, NULL, 1100 },
		{ NULL, 0, NULL, 0 },
	};
	const char *header_file = NULL, *ca_file = NULL;
	struct inspect_opts o = { .dequant = -1 };
	inspect_mode mode = NULL;
	int insecure = 0, sort_given = 0, c, rc;
	struct err e = { 0 };

	addrspace_setup();
	jsonmem_watch();
	nofile_raise();
	while ((c = getopt_long(argc, argv, "jtqhVo:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = 1; break;
		case 't': o.tensors = 1; break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("stfs-inspect %s\n", STFS_VERSION); return 0;
		case 'H': header_file = optarg; break;
		case 'C': ca_file = optarg; break;
		case 'k': insecure = 1; break;
		case 's':
			o.sort = inspect_parse_sort(optarg);
			if (o.sort < 0) {
				fprintf(stderr, "stfs-inspect: --sort=%s: "
					"expected size, name or offset\n",
					optarg);
				return 2;
			}
			sort_given = 1;
			break;
		case 'g':
			o.group = 1;
			if (optarg && parse_depth(optarg, &o.group_depth)) {
				fprintf(stderr, "stfs-inspect: --group=%s: "
					"expected a depth from 1 to 1000\n",
					optarg);
				return 2;
			}
			break;
		case 1001:
			if (set_mode(&mode, inspect_stats, "--stats"))
				return 2;
			break;
		case 1002:
			if (set_mode(&mode, inspect_diff, "--diff"))
				return 2;
			break;
		case 1100:
			if (set_mode(&mode, inspect_scan, "--scan"))
				return 2;
			break;
		case 1003: o.dequant = 1; break;
		case 1004: o.dequant = 0; break;
		case 1005: o.force = 1; break;
		case 1006:
		case 1007:
			if (parse_tol(optarg, c == 1006 ? &o.atol : &o.rtol)) {
				fprintf(stderr, "stfs-inspect: --%s=%s: expected "
					"a number >= 0 (e.g. 1e-3)\n", c == 1006 ?
					"atol" : "rtol", optarg);
				return 2;
			}
			o.tolerant = 1;
			break;
		case 1008:
			o.format = !strcmp(optarg, "tsv") ? INSPECT_FORMAT_TSV :
				   !strcmp(optarg, "csv") ? INSPECT_FORMAT_CSV :
				   !strcmp(optarg, "text") ? INSPECT_FORMAT_TEXT :
				   -1;
			if (o.format < 0) {
				fprintf(stderr, "stfs-inspect: --format=%s: "
					"expected tsv, csv or text\n", optarg);
				return 2;
			}
			break;
		case 1009: o.png = optarg; break;
		case 1010: o.histogram = 1; break;
		/* modes: case X: if (set_mode(&mode, inspect_X, "--X")) return 2; break; */
		case 'M': if (set_mode(&mode, inspect_merge, "--merge")) return 2; break;
		case 'X': if (set_mode(&mode, inspect_merge, "--extract")) return 2;
			  if (o.extract) { fputs("stfs-inspect: one --extract at a time\n", stderr); return 2; }
			  o.extract = optarg; break;
		case 'S': o.strip = 1; break;
		case 'o': o.output = optarg; break;
		default: return usage_error();	/* getopt said why */
		}
	}
	/* --png NAME is a mode of its own; with --diff, where to draw */
	if (o.png && !mode)
		mode = inspect_png;
	if ((o.histogram && mode != inspect_png) ||
	    (o.png && mode != inspect_png && mode != inspect_diff)) {
		fputs("stfs-inspect: --png goes alone (--png NAME -o FILE) or "
		      "with --diff (--png DIR); --histogram with --png NAME "
		      "(try --help)\n", stderr);
		return 2;
	}
	/* --sort alone means "list the tensors in this order" */
	if (sort_given && !o.group)
		o.tensors = 1;
	if (!mode)
		mode = inspect_summary;
	if ((o.strip && mode != inspect_merge) ||
	    ((o.output || o.force) && mode != inspect_merge &&
	     mode != inspect_png)) {
		fputs("stfs-inspect: -o, --strip and --force go with --merge or "
		      "--extract (-o and --force also with --png) (try --help)\n",
		      stderr);
		return 2;
	}
	if (o.tolerant && mode != inspect_diff) {
		fputs("stfs-inspect: --atol and --rtol go with --diff (try "
		      "--help)\n", stderr);
		return 2;
	}
	if (o.format != INSPECT_FORMAT_TEXT && (mode != inspect_summary ||
	    o.json || (o.tensors && o.group))) {
		fputs("stfs-inspect: --format prints one table: that of "
		      "--tensors or of --group, without --json (try --help)\n",
		      stderr);
		return 2;
	}
	/* --format alone: the table of every tensor */
	if (o.format != INSPECT_FORMAT_TEXT && !o.group)
		o.tensors = 1;
	o.nsources = argc - optind;
	o.sources = argv + optind;
	if (o.nsources < 1)
		return usage_error();
	if (set_http(&o, header_file, ca_file, insecure, &e) ||
	    check_hub(&o, header_file, &e)) {
		if (!o.quiet)
			err_print("stfs-inspect", &e);
		return 2;
	}
	rc = mode(&o);
	if (fflush(stdout) != 0 && rc == 0)
		rc = 2;
	return rc;
}
