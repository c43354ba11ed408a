/* stfs.c - mount a safetensors model read-only as a directory.
 *
 *   stfs [options] SOURCE MOUNTPOINT
 *   mount.stfs SOURCE MOUNTPOINT [-s] [-f] [-n] [-v] [-o opts]
 *
 * The same binary is installed as mount.stfs and mount.fuse.stfs so that
 * mount(8) and fstab (type fuse.stfs) can use it.  Invoked under such a
 * name it follows the mount helper convention: -f means "fake" (validate,
 * do not mount) and -s, -n, -v are accepted and ignored.
 *
 * The model is opened and validated completely before anything is
 * mounted; the command returns once the mount exists, and the daemon then
 * logs to syslog.  Without -f the process forks before it opens anything
 * (background.h says why): the child does the work, the parent waits for
 * its word.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "base/error.h"
#include "base/meter.h"
#include "base/jsonmem.h"
#include "cli/addrspace.h"
#include "base/msglog.h"
#include "cli/background.h"
#include "format/naming.h"
#include "cli/mountpoint.h"
#include "cli/nofile.h"
#include "cli/progress.h"
#include "cli/readahead.h"
#include "cli/stfs_help.h"
#include "model/display.h"
#include "model/catalog.h"
#include "model/summary.h"
#include "fuse/adapter.h"
#include "model/model.h"
#include "model/provider.h"
#include "source/source.h"
#ifdef STFS_HAVE_HTTP
#include "source/http/source_http.h"
#endif
#ifdef STFS_HAVE_S3
#include "source/s3/s3.h"
#endif
#include "view/heatmap.h"
#include "view/view.h"

#define PROG "stfs"
#define DEFAULT_READAHEAD_KIB 512

struct stfs_opts {
	char *source;
	char *shown;		/* source as fsname and logs show it */
	char *mountpoint;
	char *extra;		/* a third positional argument: an error */
	char *fsname;		/* absolute path (or URL) of SOURCE */
	unsigned readahead;	/* KiB; 0 leaves the kernel's default */
	unsigned uid, gid;
	int uid_set, gid_set;
	int tree;		/* -o tree: dotted names become directories */
	char *views;		/* -o views=hidden|visible|off */
	unsigned png_px, png_cache_mb;	/* -o png_px=N, png_cache=MiB */
#ifdef STFS_HAVE_HTTP
	struct {		/* for http(s):// sources, see source_http.h */
		char *header_file, *ca_file;
		int insecure, no_validator;
		unsigned cache_mb, timeout_s, tries, readahead_mb, connections;
		int disk;	/* -o cache=on (1) / off (-1) */
		char *cache_dir, *cache_max, *max_throughput, *min_rate;
	} http;
#endif
#ifdef STFS_HAVE_S3
	int s3_anonymous;	/* -o s3_anonymous: unsigned requests */
	struct {		/* -o shared_cache*, see s3.h */
		char *url, *key_file, *profile, *endpoint, *region;
	} shared;
#endif
	enum view_views views_mode;	/* parsed from views */
	int helper;		/* invoked as mount.stfs / mount.fuse.stfs */
	int fake;		/* helper -f: validate only */
	int report;		/* forked: tell the waiting parent here once
				   mounted (-1: in the foreground) */
	int quiet;		/* -q: no progress line */
	int show_help, show_version;
};

enum {
	KEY_HELP,
	KEY_VERSION,
	KEY_F,			/* foreground, or fake in helper mode */
	KEY_S,			/* single-threaded, or sloppy in helper mode */
	KEY_HELPER_ONLY,	/* -n, -v: helper noise */
	KEY_QUIET,
};

#define STFS_OPT(t, p, v) { t, offsetof(struct stfs_opts, p), v }

static const struct fuse_opt stfs_opt_spec[] = {
	STFS_OPT("readahead=%u", readahead, 0),
	STFS_OPT("tree", tree, 1),
	STFS_OPT("flat", tree, 0),
	STFS_OPT("views=%s", views, 0),
	STFS_OPT("png_px=%u", png_px, 0),
	STFS_OPT("png_cache=%u", png_cache_mb, 0),
	STFS_OPT("uid=%u", uid, 0),
	STFS_OPT("uid=", uid_set, 1),
	STFS_OPT("gid=%u", gid, 0),
	STFS_OPT("gid=", gid_set, 1),
#ifdef STFS_HAVE_HTTP
	STFS_OPT("header_file=%s", http.header_file, 0),
	STFS_OPT("ca_file=%s", http.ca_file, 0),
	STFS_OPT("insecure", http.insecure, 1),
	STFS_OPT("http_no_validator", http.no_validator, 1),
	STFS_OPT("http_cache_mb=%u", http.cache_mb, 0),
	STFS_OPT("http_timeout=%u", http.timeout_s, 0),
	STFS_OPT("http_tries=%u", http.tries, 0),
	STFS_OPT("http_readahead_mb=%u", http.readahead_mb, 0),
	STFS_OPT("http_connections=%u", http.connections, 0),
	STFS_OPT("cache=on", http.disk, 1),
	STFS_OPT("cache=off", http.disk, -1),
	STFS_OPT("cache_dir=%s", http.cache_dir, 0),
	STFS_OPT("cache_max=%s", http.cache_max, 0),
	STFS_OPT("max_throughput=%s", http.max_throughput, 0),
	STFS_OPT("http_min_rate=%s", http.min_rate, 0),
#endif
#ifdef STFS_HAVE_S3
	STFS_OPT("s3_anonymous", s3_anonymous, 1),
	STFS_OPT("shared_cache=%s", shared.url, 0),
	STFS_OPT("shared_cache_key=%s", shared.key_file, 0),
	STFS_OPT("shared_cache_profile=%s", shared.profile, 0),
	STFS_OPT("shared_cache_endpoint=%s", shared.endpoint, 0),
	STFS_OPT("shared_cache_region=%s", shared.region, 0),
#endif
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("-q", KEY_QUIET),
	FUSE_OPT_KEY("--quiet", KEY_QUIET),
	FUSE_OPT_KEY("-f", KEY_F),
	FUSE_OPT_KEY("-s", KEY_S),
	FUSE_OPT_KEY("-n", KEY_HELPER_ONLY),
	FUSE_OPT_KEY("-v", KEY_HELPER_ONLY),
	/* fstab noise: meaningful to mount(8), not to a FUSE mount. */
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("rw", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("comment=", FUSE_OPT_KEY_DISCARD),
	/* x-* and X-* (x-systemd.automount, X-mount.mkdir): opt_proc */
	FUSE_OPT_END
};

/* Ranges of the numeric -o options (issue 14.8).  fuse_opt's %u is
 * sscanf: "-1" becomes 4294967295 and too many digits wrap, so every value
 * is checked here first, strictly (decimal digits only), and a bad one is
 * a one-line usage error naming the option and its range. */
struct num_range {
	const char *name;
	unsigned long long min, max;
	const char *unit;
};

static const struct num_range num_ranges[] = {
	{ "readahead", 0, 65536, "KiB" },
	{ "uid", 0, 4294967294ULL, "" },	/* (uid_t)-1 means "none" */
	{ "gid", 0, 4294967294ULL, "" },
	{ "png_px", HEATMAP_PX_MIN, HEATMAP_PX_MAX, "pixels" },
	{ "png_cache", 1, 65536, "MiB" },
#ifdef STFS_HAVE_HTTP
	{ "http_cache_mb", 1, 65536, "MiB" },
	{ "http_timeout", 1, 3600, "s" },
	{ "http_tries", 1, 100, "" },
	{ "http_readahead_mb", 1, 4096, "MiB" },
	{ "http_connections", 1, 64, "" },
#endif
};

/* Check one "name=value" of a -o list (len bytes at opt). */
static int
check_num_opt(const char *opt, size_t len, struct err *e)
{
	for (size_t i = 0; i < sizeof(num_ranges) / sizeof(num_ranges[0]); i++) {
		const struct num_range *r = &num_ranges[i];
		size_t n = strlen(r->name), k;
		unsigned long long v = 0;
		int ok;

		if (len <= n || strncmp(opt, r->name, n) != 0 || opt[n] != '=')
			continue;
		ok = len > n + 1 && len - n - 1 <= 20;
		for (k = n + 1; ok && k < len; k++) {
			unsigned d = (unsigned)(opt[k] - '0');

			ok = d <= 9 && v <= (r->max - d) / 10;
			v = v * 10 + d;
		}
		if (ok && v >= r->min)
			return 0;
		return err_set(e, ERR_USAGE, "-o %.*s: %s must be a whole number "
			       "from %llu to %llu%s%s", (int)len, opt, r->name,
			       r->min, r->max, r->unit[0] ? " " : "", r->unit);
	}
	return 0;
}

/* Every -o list of the command line ("-o a,b" and "-oa,b"). */
static int
check_num_opts(int argc, char **argv, struct err *e)
{
	for (int i = 1; i < argc; i++) {
		const char *list = NULL, *p;

		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			list = argv[++i];
		else if (strncmp(argv[i], "-o", 2) == 0)
			list = argv[i] + 2;
		for (p = list; p && *p;) {
			size_t n = strcspn(p, ",");

			if (check_num_opt(p, n, e) != 0)
				return -1;
			p += n + (p[n] == ',');
		}
	}
	return 0;
}

static int
opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct stfs_opts *o = data;
	char **slot;

	(void)outargs;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		slot = !o->source ? &o->source :
		       !o->mountpoint ? &o->mountpoint : &o->extra;
		if (!*slot)
			*slot = strdup(arg);
		return *slot ? 0 : -1;
	case KEY_HELP:
		o->show_help = 1;
		return 0;
	case KEY_VERSION:
		o->show_version = 1;
		return 0;
	case KEY_QUIET:
		o->quiet = 1;
		return 0;
	case KEY_F:
		if (o->helper) {
			o->fake = 1;
			return 0;
		}
		return 1;
	case KEY_S:
	case KEY_HELPER_ONLY:
		/* In stfs mode libfuse decides (-s is single-threaded; -n
		 * and -v end up as unknown options). */
		return o->helper ? 0 : 1;
	case FUSE_OPT_KEY_OPT:
		/* fstab's options for other programs (systemd, mount(8)):
		 * mount(8) keeps them from its helpers, a helper run by
		 * hand with an fstab line's options gets them */
		return (arg[0] == 'x' || arg[0] == 'X') && arg[1] == '-' ? 0 : 1;
	default:
		return 1;
	}
}

/* --- messages ------------------------------------------------------------ */

enum log_mode {
	LOGTO_STDERR,		/* before the mount: one line each */
	LOGTO_CAPTURE,		/* around libfuse calls: keep the first error */
	LOGTO_SYSLOG,		/* daemonized */
};

static enum log_mode log_mode;
static char log_captured[ERR_DETAIL_MAX];
static int log_line_done;	/* the captured text ended with a newline */
/* The progress line while SOURCE opens (open_source): a message erases
 * it first (libfuse's log function takes no argument of ours). */
static struct progress *log_progress;
/* What goes to the terminal or syslog goes here too: the mount shows it
 * as .stfs/log (base/msglog.h), for a daemon whose syslog reaches no one */
static struct msglog *log_kept;

static void
stfs_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	va_list again;
	size_t n;

	if (log_mode != LOGTO_CAPTURE && level <= FUSE_LOG_INFO &&
	    !(log_progress && level > FUSE_LOG_NOTICE)) {
		va_copy(again, ap);
		msglog_vadd(log_kept, (int)level, fmt, again);
		va_end(again);
	}
	switch (log_mode) {
	case LOGTO_SYSLOG:
		/* fuse_log_level mirrors the syslog priorities. */
		vsyslog((int)level, fmt, ap);
		return;
	case LOGTO_CAPTURE:
		/* libfuse builds some messages from several calls ("unknown
		 * option(s): `" then each option): gather them all and make
		 * one line of them. */
		if (level > FUSE_LOG_ERR)
			return;
		n = strlen(log_captured);
		if (n && log_line_done && n + 2 < sizeof(log_captured)) {
			memcpy(log_captured + n, "; ", 3);
			n += 2;
		}
		vsnprintf(log_captured + n, sizeof(log_captured) - n, fmt, ap);
		log_line_done = 0;
		for (; log_captured[n]; n++) {
			if (log_captured[n] != '\n')
				continue;
			log_line_done = !log_captured[n + 1];
			log_captured[n] = log_line_done ? '\0' : ' ';
		}
		return;
	case LOGTO_STDERR:
		/* While SOURCE opens, a file read and closed again (an index)
		 * logs what it cost, which is for the log at unmount: not a
		 * line on the user's terminal. */
		if (log_progress && level > FUSE_LOG_NOTICE)
			return;
		if (log_progress)
			progress_clear(log_progress);
		if (level <= FUSE_LOG_WARNING)
			fputs(PROG ": ", stderr);
		vfprintf(stderr, fmt, ap);
		return;
	}
}

/* Turn what libfuse logged into the one error line. */
static void
captured_err(struct err *e, enum err_code code, const char *where,
	     const char *fallback)
{
	const char *msg = log_captured[0] ? log_captured : fallback;

	/* libfuse prefixes its messages with "fuse: ". */
	if (strncmp(msg, "fuse: ", 6) == 0)
		msg += 6;
	err_set(e, code, "%s", msg);
	err_at(e, where);
	log_captured[0] = '\0';
	log_line_done = 0;
}

/* An option libfuse does not know (a typo in -o): say where the options
 * are listed. */
static void
point_to_help(struct err *e, int helper)
{
	size_t n = strlen(e->detail);

	snprintf(e->detail + n, sizeof(e->detail) - n, " (%s --help lists "
		 "the options; man %s)", helper ? "mount.stfs" : PROG,
		 helper ? "mount.stfs" : PROG);
}

/* -o ro,default_permissions,subtype=stfs,fsname=SOURCE, appended after
 * the user's options so that ro wins; fsname makes mount(8), findmnt and
 * df show SOURCE (its absolute path, whatever the directory stfs ran in),
 * and giving it keeps libfuse from adding subtype=<argv0>. */
static int
add_mount_opts(struct fuse_args *args, const char *source)
{
	char *fsname = NULL, *opts = NULL, maxread[32];
	int rc = -1;

	/* After the user's options, so that it wins (see adapter.h). */
	snprintf(maxread, sizeof(maxread), "max_read=%u", ADAPTER_MAX_READ);
	if (asprintf(&fsname, "fsname=%s", source) < 0)
		return -1;
	if (fuse_opt_add_opt(&opts, "ro") == 0 &&
	    fuse_opt_add_opt(&opts, "default_permissions") == 0 &&
	    fuse_opt_add_opt(&opts, maxread) == 0 &&
	    fuse_opt_add_opt(&opts, "subtype=stfs") == 0 &&
	    fuse_opt_add_opt_escaped(&opts, fsname) == 0 &&
	    fuse_opt_add_arg(args, "-o") == 0 &&
	    fuse_opt_add_arg(args, opts) == 0)
		rc = 0;
	free(fsname);
	free(opts);
	return rc;
}

/* --- main ---------------------------------------------------------------- */

static int
is_helper_name(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	return strncmp(base, "mount.", 6) == 0;
}

/* The mount's word that it runs (adapter.h: on_init). */
struct started {
	struct stfs_opts *o;
	const char *mnt;
	struct fuse_session *se;
	int state;		/* atomic: 0 not yet, 1 started, -1 failed */
	int error;		/* -1: background_ready()'s errno */
};

/* INIT is being answered: a worker runs and has its buffer.  Forked, the
 * waiting parent exits 0 now (not before: a loop that cannot start its
 * first worker under `ulimit -v` left no mount behind an exit status of
 * 0) and messages go to syslog. */
static void
started(void *arg)
{
	struct started *s = arg;
	struct stfs_opts *o = s->o;

	if (o->report < 0) {
		log_mode = LOGTO_STDERR;
		__atomic_store_n(&s->state, 1, __ATOMIC_RELEASE);
		return;
	}
	if (background_ready(o->report) != 0) {
		s->error = errno;
		__atomic_store_n(&s->state, -1, __ATOMIC_RELEASE);
		fuse_session_exit(s->se);
		return;
	}
	o->report = -1;
	openlog(PROG, LOG_PID, LOG_DAEMON);
	log_mode = LOGTO_SYSLOG;
	syslog(LOG_INFO, "mounted %s on %s", o->fsname ? o->fsname : o->shown,
	       s->mnt);
	__atomic_store_n(&s->state, 1, __ATOMIC_RELEASE);
}

/* The loop ended (ret) before INIT was answered: its one line, with what
 * libfuse said ("error creating thread: ...", "failed to allocate read
 * buffer"). */
static int
not_started(struct err *e, const struct stfs_opts *o, int ret)
{
	const char *why = log_captured[0] ? log_captured : ret < -1 ?
			  strerror(-ret) : "the FUSE loop ended";

	log_mode = LOGTO_STDERR;
	if (strncmp(why, "fuse: ", 6) == 0)
		why += 6;
	if (ret > 0)
		err_set(e, ERR_IO, "stopped by signal %d (%s) before the mount "
			"was ready", ret, strsignal(ret));
	else
		err_set(e, ERR_NO_MEMORY, "the mount could not start (%s): out "
			"of memory or threads? see ulimit -v and ulimit -u",
			why);
	log_captured[0] = '\0';
	return err_at(e, o->mountpoint);
}

static int
run(struct fuse_args *args, struct stfs_opts *o, const struct catalog *c,
    const char *mnt, struct err *e)
{
	struct view_model *vm;
	size_t i;
	struct fuse_cmdline_opts cmd = { 0 };
	struct fuse_loop_config *loop;
	struct adapter fs = { 0 };
	struct fuse_session *se;
	struct view_opts vo = { 0 };
	struct view *v = NULL;
	struct readahead ra;
	struct started st = { 0 };
	int ret = -1;

	vo.set_uid = o->uid_set;
	vo.uid = o->uid;
	vo.set_gid = o->gid_set;
	vo.gid = o->gid;
	vo.tree = o->tree;
	vo.views = o->views_mode;
	vo.png_px = o->png_px;
	vo.png_cache_mb = o->png_cache_mb;
	vo.log = log_kept;
	/* One model at "" is exactly the single-model view; several are a
	 * tree (view.h: view_build_multi). */
	vm = calloc(c->n, sizeof(*vm));
	if (!vm)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	for (i = 0; i < c->n; i++) {
		vm[i].dir = c->entries[i].dir;
		vm[i].label = c->entries[i].label;
		vm[i].model = c->entries[i].model;
	}
	ret = view_build_multi(vm, c->n, c->files, &vo, &v, e);
	free(vm);
	if (ret != 0)
		return err_at(e, o->shown ? o->shown : o->source);
	ret = -1;
	if (add_mount_opts(args, o->fsname ? o->fsname : o->shown) != 0) {
		err_set(e, ERR_NO_MEMORY, "out of memory");
		goto err_out1;
	}
	log_mode = LOGTO_CAPTURE;
	fs.view = v;
	adapter_setup(&fs);
	catalog_watch(c, &fs.stale_watch);
	fs.conn_opts = fuse_parse_conn_info_opts(args);
	if (!fs.conn_opts || fuse_parse_cmdline(args, &cmd) != 0) {
		captured_err(e, ERR_USAGE, "", "bad options");
		point_to_help(e, o->helper);
		goto err_out1;
	}
	if (o->fake) {
		ret = 0;
		goto err_out1;
	}

	se = fuse_session_new(args, &adapter_ops, sizeof(adapter_ops), &fs);
	fs.se = se;
	if (!se) {
		captured_err(e, ERR_USAGE, "", "cannot create the session");
		point_to_help(e, o->helper);
		goto err_out1;
	}
	if (fuse_set_signal_handlers(se) != 0) {
		captured_err(e, ERR_IO, "", "cannot set signal handlers");
		goto err_out2;
	}
	if (fuse_session_mount(se, mnt) != 0) {
		captured_err(e, ERR_IO, o->mountpoint, "mount failed");
		goto err_out3;
	}
	log_mode = LOGTO_STDERR;
	if (readahead_find(&ra, mnt, o->readahead) == 0) {
		fs.after_init = readahead_apply;
		fs.after_init_arg = &ra;
	}

	/* the foreground: fuse_daemonize(1) only changes to / */
	if (o->report < 0 && fuse_daemonize(1) != 0) {
		err_set(e, ERR_IO, "cannot change to /");
		goto err_out4;
	}
	/* Until INIT is answered (started()), what libfuse says is the
	 * reason a loop that ends gives. */
	st.o = o;
	st.mnt = mnt;
	st.se = se;
	fs.on_init = started;
	fs.on_init_arg = &st;
	log_mode = LOGTO_CAPTURE;

	if (cmd.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		loop = fuse_loop_cfg_create();
		if (!loop) {
			fuse_log(FUSE_LOG_ERR, "out of memory\n");
			goto err_out4;
		}
		/* A /dev/fuse clone per worker spreads the readahead
		 * requests of parallel readers over threads. */
		fuse_loop_cfg_set_clone_fd(loop, 1);
		fuse_loop_cfg_set_max_threads(loop, cmd.max_threads);
		/* UINT_MAX means "not given"; 3.14 would warn about it. */
		if (cmd.max_idle_threads != UINT_MAX)
			fuse_loop_cfg_set_idle_threads(loop,
						       cmd.max_idle_threads);
		ret = fuse_session_loop_mt(se, loop);
		fuse_loop_cfg_destroy(loop);
	}
	if (!__atomic_load_n(&st.state, __ATOMIC_ACQUIRE))
		ret = not_started(e, o, ret);
	else if (st.state < 0)
		ret = err_set(e, ERR_IO, "cannot go to the background: %s",
			      strerror(st.error));
	/* A signal (SIGTERM, SIGINT, SIGHUP) ends the loop with its number:
	 * that is a clean unmount, not a failure. */
	else if (ret > 0)
		ret = 0;
	/* a worker without its buffer ends the session (libfuse's rule):
	 * what libfuse said went to the log, this is why the daemon left */
	else if (ret < 0) {
		err_set(e, ERR_IO, "the mount stopped: %s (out of memory? see "
			"the messages before)", ret < -1 ? strerror(-ret) :
			"the FUSE loop failed");
		ret = err_at(e, o->mountpoint);
	}
#ifdef STFS_HAVE_HTTP
	/* Going away: no transfer is waited for (a server that trickles
	 * kept the daemon for minutes), before the offload threads and the
	 * sources end. */
	source_http_stop();
#endif

err_out4:
	fuse_session_unmount(se);
err_out3:
	fuse_remove_signal_handlers(se);
err_out2:
	fuse_session_destroy(se);
err_out1:
	if (fs.view) {
		catalog_watch(c, NULL);
		adapter_cleanup(&fs);
	}
	free(cmd.mountpoint);
	free(fs.conn_opts);
	view_free(v);
	return ret;
}

/* SOURCE through the catalog (a file, an index, a directory, the hub
 * cache, a URL); o->fsname becomes its absolute path.  On a terminal, an
 * opening that takes more than a second shows how far it has got
 * (cli/progress.h), erased when it is done. */
static int
open_source(struct stfs_opts *o, struct catalog **out, struct err *e)
{
	struct progress pr;
	struct meter m;
	struct catalog_opts co = { .meter = &m };
	struct catalog *c = NULL;
	struct naming nm;
	struct stat st;
	int rc;

	progress_start(&pr, PROG, o->shown, o->quiet, 1000);
	meter_init(&m, progress_meter, &pr);
	log_progress = &pr;
	rc = catalog_open(o->source, &co, &c, e);
	log_progress = NULL;
	progress_end(&pr, 0);
	progress_destroy(&pr);
	meter_destroy(&m);
	if (rc != 0) {
		/* "stfs ~/models/x.safetensors ~/models" the wrong way round:
		 * a directory without models, a model file as mount point. */
		if (e->code == ERR_USAGE && stat(o->source, &st) == 0 &&
		    S_ISDIR(st.st_mode) &&
		    naming_of(o->mountpoint, &nm) != NAMING_NONE) {
			size_t n = strlen(e->detail);

			snprintf(e->detail + n, sizeof(e->detail) - n, "; did "
				 "you swap SOURCE and MOUNTPOINT? (usage: %s "
				 "[options] SOURCE MOUNTPOINT)", PROG);
		}
		return -1;
	}
	o->fsname = c->label;
	c->label = NULL;
	*out = c;
	return 0;
}

/* A checkpoint whose pickle would import or call more than
 * torch.load(weights_only=True) allows mounts (stfs calls nothing), with
 * a warning line each: the one thing its user most needs told. */
static void
warn_unsafe(const struct catalog *c)
{
	for (size_t i = 0; i < c->n; i++) {
		char *w = summary_unsafe_warning(c->entries[i].model);

		if (w)
			fuse_log(FUSE_LOG_WARNING, "warning: %s: %s\n",
				 c->entries[i].label, w);
		free(w);
	}
}

#ifdef STFS_HAVE_HTTP
/* The HTTP source's messages (object changed, server gone and back) go
 * where the daemon's own go: stderr, then syslog. */
static void
http_log(int prio, const char *msg)
{
	fuse_log((enum fuse_log_level)prio, "%s\n", msg);
}

static int
setup_http(const struct stfs_opts *o, struct err *e)
{
	struct http_options ho = { 0 };

	ho.header_file = o->http.header_file;
	ho.ca_file = o->http.ca_file;
	ho.insecure = o->http.insecure;
	ho.no_validator = o->http.no_validator;
	ho.cache_mb = o->http.cache_mb;
	ho.timeout_s = o->http.timeout_s;
	ho.tries = o->http.tries;
	ho.readahead_mb = o->http.readahead_mb;
	ho.connections = o->http.connections;
	ho.log = http_log;
	ho.cache = o->http.disk;
	ho.cache_dir = o->http.cache_dir;
	ho.cache_max = o->http.cache_max;
	ho.max_throughput = o->http.max_throughput;
	ho.min_rate = o->http.min_rate;
	return http_options_set(&ho, e);
}

/* hf://: the token comes from the Hub's conventions (HF_TOKEN, the token
 * file) and goes to the endpoint only; a header file would also reach the
 * CDN, so it is refused here. */
static int
setup_hub(const struct stfs_opts *o, struct err *e)
{
	if (o->http.header_file)
		return err_set(e, ERR_USAGE, "header_file does not apply to "
			       "hf:// sources: give the token with HF_TOKEN "
			       "or in $HF_HOME/token");
	return 0;
}
#endif

#ifdef STFS_HAVE_S3
/* The fleet's shared cache (-o shared_cache=, or STFS_SHARED_CACHE), for
 * remote sources; its key file is read now, before the daemon leaves its
 * working directory. */
static int
setup_shared(const struct stfs_opts *o, struct err *e)
{
	struct s3_tier_options so = {
		.url = o->shared.url, .key_file = o->shared.key_file,
		.profile = o->shared.profile, .endpoint = o->shared.endpoint,
		.region = o->shared.region,
	};

	return s3_tier_setup(&so, e);
}
#endif

/* ps and /proc/PID/cmdline show argv for the life of the mount: a URL's
 * query (presigned signatures) and user info are blanked there, in place
 * (issue 14.5); the URL itself lives on in o->source. */
static void
hide_url_secrets(int argc, char **argv, const char *source, const char *shown)
{
	int i;

	for (i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]), k = strlen(shown);
		char *q;

		if (strcmp(argv[i], source) != 0)
			continue;
		if (k <= n) {
			memcpy(argv[i], shown, k);
			memset(argv[i] + k, 0, n - k);
		} else if ((q = strpbrk(argv[i], "?#")) != NULL) {
			memset(q, 0, strlen(q));
		}
	}
}

/* libfuse's own parse of the options, on a copy, as run() will make it
 * (fuse_parse_cmdline(), then fuse_session_new(), which refuses what no
 * one knows), before SOURCE is opened: a typo in -o is reported at once,
 * not after minutes of fetching a remote model's headers.  A session made
 * here opens nothing and starts no thread (safe before the fork); it is
 * destroyed at once.  *foreground: -f, -d or -o debug. */
static int
check_fuse_opts(const struct fuse_args *args, const struct stfs_opts *o,
		int *foreground, struct err *e)
{
	static const struct fuse_lowlevel_ops none;
	struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
	struct fuse_cmdline_opts cmd = { 0 };
	struct fuse_session *se = NULL;
	int i, rc = -1;

	for (i = 0; i < args->argc; i++)
		if (fuse_opt_add_arg(&copy, args->argv[i]) != 0)
			goto out;
	if (add_mount_opts(&copy, o->shown) != 0)
		goto out;
	log_mode = LOGTO_CAPTURE;
	if (fuse_parse_cmdline(&copy, &cmd) == 0)
		se = fuse_session_new(&copy, &none, sizeof(none), NULL);
	log_mode = LOGTO_STDERR;
	if (!se) {
		captured_err(e, ERR_USAGE, "", "bad options");
		point_to_help(e, o->helper);
		goto out_free;
	}
	fuse_session_destroy(se);
	*foreground = cmd.foreground;
	rc = 0;
	goto out_free;
out:
	err_set(e, ERR_NO_MEMORY, "out of memory");
out_free:
	free(cmd.mountpoint);
	fuse_opt_free_args(&copy);
	return rc;
}

int
main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct stfs_opts o = { 0 };
	struct err e = { 0 };
	struct catalog *cat = NULL;
	char *mnt = NULL;
	int status = 0, foreground = 0;
#ifdef STFS_HAVE_HTTP
	const struct provider *prov;
#endif

	addrspace_setup();
	jsonmem_watch();
	log_kept = msglog_new(MSGLOG_BYTES);	/* NULL: syslog only */
	fuse_set_log_func(stfs_log);
	nofile_raise();
	o.readahead = DEFAULT_READAHEAD_KIB;
	o.report = -1;
	o.helper = argc > 0 && is_helper_name(argv[0]);
	if (check_num_opts(argc, argv, &e) != 0)
		goto out;
	if (fuse_opt_parse(&args, &o, stfs_opt_spec, opt_proc) != 0) {
		err_set(&e, ERR_USAGE, "bad options (see %s --help)", PROG);
		goto out;
	}
	if (o.show_help) {
		stfs_help(stdout, DEFAULT_READAHEAD_KIB);
		goto out;
	}
	if (o.show_version) {
		printf("%s %s (libfuse %s)\n", PROG, STFS_VERSION,
		       fuse_pkgversion());
		goto out;
	}
	if (o.views && strcmp(o.views, "hidden") == 0) {
		o.views_mode = VIEW_VIEWS_HIDDEN;
	} else if (o.views && strcmp(o.views, "visible") == 0) {
		o.views_mode = VIEW_VIEWS_VISIBLE;
	} else if (o.views && strcmp(o.views, "off") == 0) {
		o.views_mode = VIEW_VIEWS_OFF;
	} else if (o.views) {
		err_set(&e, ERR_USAGE, "-o views=%s: say hidden, visible or "
			"off", o.views);
		goto out;
	}
	if (!o.source || !o.mountpoint || o.extra) {
		err_set(&e, ERR_USAGE, "%s (usage: %s [options] SOURCE "
			"MOUNTPOINT; see --help)",
			o.extra ? "too many arguments" :
			"SOURCE and MOUNTPOINT are required", PROG);
		goto out;
	}
	/* mount(8) runs its helper in its own working directory: / at
	 * boot, where fstab's relative SOURCE (nofail hiding the error)
	 * names another file than the one meant */
	if (o.helper && !provider_for(o.source)->scheme && o.source[0] != '/') {
		err_set(&e, ERR_USAGE, "a relative SOURCE, which mount(8) and "
			"fstab resolve from their own working directory (/ at "
			"boot): give its absolute path (\"$PWD/%s\", or /... in "
			"/etc/fstab)", o.source);
		err_at(&e, o.source);
		goto out;
	}
	o.shown = display_name(o.source);
	if (!o.shown) {
		err_set(&e, ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	if (source_is_url(o.source))
		hide_url_secrets(argc, argv, o.source, o.shown);
	if (check_fuse_opts(&args, &o, &foreground, &e) != 0)
		goto out;

	/* Into the background before any source is opened: opening one
	 * may start threads, which a fork would leave behind. */
	if (!o.fake && !foreground &&
	    background_start(o.mountpoint, &o.report) != 0) {
		err_set(&e, ERR_IO, "cannot go to the background: %s",
			strerror(errno));
		goto out;
	}
#ifdef STFS_HAVE_HTTP
	/* Only for remote sources: a local mount must not depend on a token
	 * file. */
	prov = provider_for(o.source);
	if ((prov->flags & PROVIDER_OWN_TOKEN) && setup_hub(&o, &e) != 0)
		goto out;
	if ((prov->flags & PROVIDER_REMOTE) && setup_http(&o, &e) != 0)
		goto out;
#endif
#ifdef STFS_HAVE_S3
	if (o.s3_anonymous) {
		struct s3_options so = { .anonymous = 1 };

		s3_set_options(&so);
	}
	if ((prov->flags & PROVIDER_REMOTE) && setup_shared(&o, &e) != 0)
		goto out;
#endif
	/* Validate everything before touching the mount point. */
	if (open_source(&o, &cat, &e) != 0) {
		err_at(&e, o.source);
		goto out;
	}
	warn_unsafe(cat);
	/* a source opened fine may have left its name (not every source
	 * names only on errors yet): the mount point's errors name it */
	err_clear(&e);
	if (mountpoint_check(o.mountpoint, &mnt, &e) != 0)
		goto out;
	if (run(&args, &o, cat, mnt, &e) != 0 && e.code == ERR_OK)
		status = 1;

out:
	if (e.code != ERR_OK) {
		if (log_mode == LOGTO_SYSLOG)
			syslog(LOG_ERR, "%s: %s: %s", e.where,
			       err_name(e.code), e.detail);
		else
			err_print(PROG, &e);
		status = err_exit_status(e.code);
	}
	catalog_free(cat);
	free(mnt);
	free(o.source);
	free(o.shown);
	free(o.mountpoint);
	free(o.extra);
	free(o.views);
	free(o.fsname);
#ifdef STFS_HAVE_HTTP
	free(o.http.header_file);
	free(o.http.ca_file);
	free(o.http.cache_dir);
	free(o.http.cache_max);
	free(o.http.max_throughput);
	free(o.http.min_rate);
#endif
#ifdef STFS_HAVE_S3
	free(o.shared.url);
	free(o.shared.key_file);
	free(o.shared.profile);
	free(o.shared.endpoint);
	free(o.shared.region);
#endif
	fuse_opt_free_args(&args);
	fuse_set_log_func(NULL);
	msglog_free(log_kept);
	return status;
}
