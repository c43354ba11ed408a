/* inspect_merge.c - stfs-inspect --merge / --extract PREFIX [--strip]:
 * write the virtual safetensors file a mount shows under .safetensors/
 * (repack.h) to OUT, byte for byte, for machines without FUSE.
 *
 * Data is copied with copy_file_range(2) from local sources (no trip
 * through user space) and with source_pread() from remote ones.  OUT is
 * written under a temporary name in its directory and renamed at the
 * end, so an interrupted run leaves no half file under OUT's name; an
 * OUT that is one of the sources is refused before anything is written,
 * and so is any existing OUT unless --force (the rename then does not
 * replace a file that appeared meanwhile either).  What was written is
 * said on stderr: tensors, bytes, path, and with --dequant the settings
 * its quantized weights took without a config (summary.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "cli/inspect.h"
#include "cli/progress.h"
#include "model/model.h"
#include "model/quant_model.h"
#include "model/summary.h"
#include "source/source.h"
#include "model/repack.h"
#include "model/tensor_render.h"

#define CHUNK (16u << 20)	/* per copy call: progress stays lively */

/* The bytes written so far, shown on the progress line (cli/progress.h). */
struct written {
	struct progress line;
	uint64_t done, total;
};

static void
advance(struct written *w, uint64_t n)
{
	w->done += n;
	progress_bytes(&w->line, "written", w->done, w->total);
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copy source bytes [off, off + len) to fd at its current position;
 * in_fd: the source's descriptor, or < 0. */
static int
copy_range_fd(struct source *s, int in_fd, uint64_t off, uint64_t len,
	      int fd, struct written *pr, char **bounce, struct err *e)
{
	int use_cfr = in_fd >= 0;

	while (len) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;
		int rc;

		if (use_cfr) {
			loff_t in = (loff_t)off;
			ssize_t c = copy_file_range(in_fd, &in, fd, NULL, n, 0);

			if (c > 0) {
				off += (uint64_t)c;
				len -= (uint64_t)c;
				advance(pr, (uint64_t)c);
				continue;
			}
			if (c < 0 && errno == EINTR)
				continue;
			if (c == 0) {
				err_set(e, ERR_IO, "source ends early: it "
					"changed since it was opened");
				return err_at(e, s->name);
			}
			/* other file systems, pipes: copy through memory */
			use_cfr = 0;
		}
		if (!*bounce && !(*bounce = malloc(CHUNK)))
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		rc = source_pread(s, *bounce, n, off);
		if (rc) {
			err_set(e, ERR_IO, "read failed: %s", strerror(-rc));
			return err_at(e, s->name);
		}
		if (write_all(fd, *bounce, n))
			return err_set(e, ERR_IO, "write failed: %s",
				       strerror(errno));
		off += n;
		len -= n;
		advance(pr, n);
	}
	return 0;
}

/* The source's descriptor is pinned for the copy (source_fd_get). */
static int
copy_range(struct source *s, uint64_t off, uint64_t len, int fd,
	   struct written *pr, char **bounce, struct err *e)
{
	int in_fd = source_fd_get(s), rc;

	rc = copy_range_fd(s, in_fd, off, len, fd, pr, bounce, e);
	if (in_fd >= 0)
		source_fd_put(s, in_fd);
	return rc;
}

/* Bytes [off, off + len) of a tensor's rendering (tensor_render.h),
 * written to fd a chunk at a time. */
static int
copy_rendered(const struct model *m, const struct model_tensor *mt,
	      uint64_t off, uint64_t len, int fd, struct written *pr,
	      char **bounce, struct err *e)
{
	struct model_tensor_at a = { m, mt };

	while (len) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;
		int rc;

		if (!*bounce && !(*bounce = malloc(CHUNK)))
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		rc = tensor_render_read(mt->t, off, n, *bounce,
					model_tensor_read_stored, &a);
		if (rc) {
			err_set(e, ERR_IO, "tensor `%s`: %s", mt->t->name,
				strerror(-rc));
			return err_at(e, m->shards[mt->shard].src->name);
		}
		if (write_all(fd, *bounce, n))
			return err_set(e, ERR_IO, "write failed: %s",
				       strerror(errno));
		off += n;
		len -= n;
		advance(pr, n);
	}
	return 0;
}

static int
copy_file(struct repack *v, struct repack_file *f, int fd, struct written *pr,
	  struct err *e)
{
	const struct model *m = repack_model(v);
	struct repack_seg segs[64];
	uint64_t off = 0, covered;
	char *bounce = NULL;
	int rc = 0;

	while (rc == 0 && off < repack_file_size(f)) {
		size_t k, i;

		k = repack_file_map(f, off, UINT64_MAX, segs, 64, &covered);
		for (i = 0; rc == 0 && i < k; i++) {
			if (segs[i].mem) {
				if (write_all(fd, segs[i].mem, segs[i].len))
					rc = err_set(e, ERR_IO, "write failed: "
						     "%s", strerror(errno));
				advance(pr, segs[i].len);
			} else if (segs[i].render) {
				rc = copy_rendered(m, segs[i].render,
						   segs[i].off, segs[i].len,
						   fd, pr, &bounce, e);
			} else {
				rc = copy_range(m->shards[segs[i].shard].src,
						segs[i].off, segs[i].len, fd,
						pr, &bounce, e);
			}
		}
		off += covered;
	}
	free(bounce);
	return rc;
}

/* Refuse an existing OUT that is (a link to) a source file or the index;
 * so is its stat. */
static int
refuse_out(const struct model *m, const struct stat *so, struct err *e)
{
	struct stat ss;
	size_t i;

	if (!S_ISREG(so->st_mode))
		return err_set(e, ERR_USAGE, "not a regular file; name a "
			       "file to write");
	for (i = 0; i < m->nshards; i++) {
		struct source *s = m->shards[i].src;
		int fd = source_fd_get(s), same;

		same = fd >= 0 && fstat(fd, &ss) == 0 &&
		       ss.st_dev == so->st_dev && ss.st_ino == so->st_ino;
		if (fd >= 0)
			source_fd_put(s, fd);
		if (same)
			return err_set(e, ERR_USAGE, "is the source `%s`; "
				       "stfs never writes to a source: name "
				       "another OUT", s->name);
	}
	if (m->index_path && stat(m->index_path, &ss) == 0 &&
	    ss.st_dev == so->st_dev && ss.st_ino == so->st_ino)
		return err_set(e, ERR_USAGE, "is the index of SOURCE; name "
			       "another OUT");
	return 0;
}

static int
check_out(const struct model *m, const char *out, struct err *e)
{
	struct stat so;

	if (stat(out, &so) == 0 && refuse_out(m, &so, e))
		return err_at(e, out);
	return 0;
}

/* tmp becomes OUT: without --force only if OUT still does not exist
 * (RENAME_NOREPLACE; a file system without it gets link(2), which never
 * replaces either).  0 or -1 with errno. */
static int
put_in_place(const char *tmp, const char *out, int force)
{
	if (force)
		return rename(tmp, out);
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(tmp, out) != 0)
		return -1;
	unlink(tmp);
	return 0;
}

static int
write_out(const struct inspect_opts *o, struct repack *v, size_t id,
	  uint64_t *size, struct err *e)
{
	struct written pr = { 0 };
	struct repack_file *f;
	char *tmp = NULL;
	int fd, rc, to_stdout = strcmp(o->output, "-") == 0;

	if (!to_stdout && check_out(repack_model(v), o->output, e))
		return -1;
	if (repack_size(v, id, o->strip, &pr.total, e) ||
	    repack_file_get(v, id, o->strip, &f, e))
		return err_at(e, o->sources[0]);
	if (to_stdout) {
		fd = STDOUT_FILENO;
	} else {
		if (asprintf(&tmp, "%s.stfs-XXXXXX", o->output) < 0) {
			repack_file_put(v, f);
			return err_set(e, ERR_NO_MEMORY, "out of memory");
		}
		fd = mkstemp(tmp);
		if (fd < 0) {
			rc = err_set(e, ERR_IO, "cannot create a file next to "
				     "it: %s", strerror(errno));
			err_at(e, o->output);
			free(tmp);
			repack_file_put(v, f);
			return rc;
		}
		/* mkstemp makes 0600; give OUT what a new file gets */
		{
			mode_t um = umask(0);

			umask(um);
			fchmod(fd, 0666 & ~um);
		}
	}
	progress_start(&pr.line, "stfs-inspect", to_stdout ? NULL : o->output,
		       o->quiet, 0);
	advance(&pr, 0);	/* the rate's start */
	rc = copy_file(v, f, fd, &pr, e);
	progress_end(&pr.line, rc == 0);
	progress_destroy(&pr.line);
	repack_file_put(v, f);
	if (!to_stdout) {
		if (rc == 0 && fsync(fd) != 0)
			rc = err_set(e, ERR_IO, "write failed: %s",
				     strerror(errno));
		if (close(fd) != 0 && rc == 0)
			rc = err_set(e, ERR_IO, "write failed: %s",
				     strerror(errno));
		if (rc == 0 && put_in_place(tmp, o->output, o->force) != 0)
			rc = errno == EEXIST ?
			     err_set(e, ERR_USAGE, "appeared while it was "
				     "written; nothing replaced (--force "
				     "replaces it)") :
			     err_set(e, ERR_IO, "cannot rename %s: %s", tmp,
				     strerror(errno));
		if (rc)
			unlink(tmp);
		if (rc)
			err_at(e, o->output);
		free(tmp);
	}
	*size = pr.total;
	return rc;
}

int
inspect_merge(const struct inspect_opts *o)
{
	struct err e = { 0 };
	struct model *m;
	struct repack *v;
	struct stat st;
	size_t id = REPACK_WHOLE;
	uint64_t size = 0;
	int rc;

	if (o->nsources != 1) {
		fputs("stfs-inspect: --merge and --extract take exactly one "
		      "SOURCE (try --help)\n", stderr);
		return 2;
	}
	if (!o->output) {
		fputs("stfs-inspect: --merge and --extract need -o OUT "
		      "(a .safetensors file to write, or - for stdout)\n",
		      stderr);
		return 2;
	}
	if (o->strip && !o->extract) {
		fputs("stfs-inspect: --strip goes with --extract PREFIX\n",
		      stderr);
		return 2;
	}
	/* before SOURCE is opened (it may be remote and large) */
	if (!o->force && strcmp(o->output, "-") != 0 &&
	    lstat(o->output, &st) == 0) {
		if (!o->quiet)
			fprintf(stderr, "stfs-inspect: %s: UsageError: exists; "
				"--force replaces it, or name another OUT\n",
				o->output);
		return 2;
	}
	rc = inspect_open(o, o->sources[0], &m);
	if (rc)
		return rc;
	if (repack_open(m, &v, &e)) {
		model_free(m);
		if (!o->quiet)
			err_print("stfs-inspect", &e);
		return 2;
	}
	if (o->extract) {
		id = repack_find(v, o->extract, strlen(o->extract));
		if (id == REPACK_WHOLE) {
			err_set(&e, ERR_USAGE, "no tensor name starts with "
				"\"%s.\"; see the names with stfs-inspect "
				"--tensors", o->extract);
			err_at(&e, o->sources[0]);
		}
	}
	if (!e.code)
		write_out(o, v, id, &size, &e);
	rc = e.code ? err_exit_status(e.code) : 0;
	if (e.code && !o->quiet)
		err_print("stfs-inspect", &e);
	if (!e.code && !o->quiet)
		fprintf(stderr, "stfs-inspect: wrote %zu tensors, %" PRIu64
			" bytes to %s\n", repack_ntensors(v, id), size,
			strcmp(o->output, "-") ? o->output : "stdout");
	/* --dequant: the values written depend on what was assumed */
	if (!e.code && !o->quiet && quant_model_quant(m))
		summary_print_assumed(stderr, "stfs-inspect: ", m, o->extract);
	repack_free(v);
	model_free(m);
	return rc;
}
