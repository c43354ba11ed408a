/* failalloc.c - allocation failures on demand, for int-failalloc: linked
 * into stfs-failalloc (tests/failalloc/meson.build), a build of stfs whose
 * objects call the __wrap_ functions here instead of the allocator
 * (ld --wrap), so the sweep fails stfs's own allocations only: never
 * libfuse's (a worker without its buffer ends the session, which is
 * libfuse's rule, not a wrong byte of stfs) nor libc's inside them.  It
 * works the same in a sanitizer build (__real_malloc is then ASan's),
 * where an LD_PRELOAD shim would have to come before the sanitizer's
 * runtime.  jansson, which stfs's views call to render JSON, is handed
 * the counting allocator too.
 *
 * Control: STFS_FAILALLOC names a file of at least 64 bytes that the test
 * and the daemon both map (MAP_SHARED), four little-endian int64:
 *
 *   0  arm     N > 0: the Nth allocation counted from now fails (ENOMEM);
 *              0: nothing fails and nothing is counted
 *   8  count   allocations seen since armed
 *   16 failed  allocations failed since armed
 *   24 mode    0: only the Nth fails; 1: the Nth and every later one
 *
 * The test zeroes count and failed, then writes arm; reads the file, then
 * writes arm 0 and looks at failed: 0 means the read needed fewer than N
 * allocations, and the sweep of that read is complete.
 *
 * STFS_FAILALLOC_TRACE names a file to which the stack of every failed
 * allocation is appended (for finding who mishandled it).
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct failalloc_ctl {
	int64_t arm, count, failed, mode;
};

extern char __executable_start[];
static struct failalloc_ctl *ctl;
static int trace_fd = -1;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
char *__real_realpath(const char *path, char *resolved);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

void *__wrap_malloc(size_t n);

__attribute__((constructor)) static void
failalloc_init(void)
{
	const char *path = getenv("STFS_FAILALLOC");
	void *p;
	int fd;

	/* jansson's allocations are stfs's too (on view_stfs's, repack's and
	 * the sidecars' read paths) */
	json_set_alloc_funcs(__wrap_malloc, free);
	if (getenv("STFS_FAILALLOC_TRACE")) {
		void *frames[1];

		trace_fd = open(getenv("STFS_FAILALLOC_TRACE"), O_WRONLY |
				O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		backtrace(frames, 1);	/* loads what it needs, now */
	}
	if (!path)
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	p = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	close(fd);
	if (p != MAP_FAILED)
		ctl = p;
}

/* 1 when this allocation is to fail. */
static int
fail_now(void)
{
	int64_t arm, k;

	if (!ctl || !(arm = __atomic_load_n(&ctl->arm, __ATOMIC_ACQUIRE)))
		return 0;
	k = __atomic_add_fetch(&ctl->count, 1, __ATOMIC_ACQ_REL);
	if (k != arm && !(k > arm && ctl->mode))
		return 0;
	__atomic_add_fetch(&ctl->failed, 1, __ATOMIC_ACQ_REL);
	if (trace_fd >= 0) {
		void *frames[32];
		int n = backtrace(frames, 32);

		/* offsets in the executable, for addr2line -e */
		dprintf(trace_fd, "allocation %lld failed:", (long long)k);
		for (int i = 1; i < n; i++)
			dprintf(trace_fd, " %#lx", (unsigned long)
				((char *)frames[i] - __executable_start));
		dprintf(trace_fd, "\n");
	}
	errno = ENOMEM;
	return 1;
}

void *
__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t k, size_t n)
{
	return fail_now() ? NULL : __real_calloc(k, n);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *
__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *
__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

int
__wrap_posix_memalign(void **p, size_t a, size_t n)
{
	return fail_now() ? ENOMEM : __real_posix_memalign(p, a, n);
}

void *
__wrap_aligned_alloc(size_t a, size_t n)
{
	return fail_now() ? NULL : __real_aligned_alloc(a, n);
}

char *
__wrap_realpath(const char *path, char *resolved)
{
	if (!resolved && fail_now())
		return NULL;
	return __real_realpath(path, resolved);
}

/* asprintf allocates inside libc: counted here as one allocation. */
int
__wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (fail_now())
		return -1;
	va_start(ap, fmt);
	n = __real_vasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}

int
__wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (fail_now())
		return -1;
	return __real_vasprintf(out, fmt, ap);
}
