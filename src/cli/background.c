/* background.c - see background.h. */
#include "cli/background.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "stfs"

/* The parent: the child's report, then its status. */
static int
wait_for_child(pid_t pid, int fd, const char *mountpoint)
{
	char c;
	ssize_t n;
	int st;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;	/* mounted; the child runs on */
	/* No report: the child printed its error and exited, or died. */
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 2;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, PROG ": %s: IoError: the daemon was killed by signal "
		"%d (%s) before the mount was ready\n", mountpoint,
		WTERMSIG(st), strsignal(WTERMSIG(st)));
	return 2;
}

int
background_start(const char *mountpoint, int *report)
{
	int fds[2];
	pid_t pid;

	/* nothing buffered may be written twice */
	fflush(stdout);
	fflush(stderr);
	/* close-on-exec: a helper the child runs (fusermount3, which stays
	 * with auto_unmount) must not hold the pipe open */
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		_exit(wait_for_child(pid, fds[0], mountpoint));
	}
	close(fds[0]);
	*report = fds[1];
	return 0;
}

int
background_ready(int report)
{
	char ok = 1;
	int fd;

	/* setsid() fails only for a process group leader, which a child
	 * never is; the caller reports it on the terminal, still ours. */
	if (setsid() < 0)
		return -1;
	if (chdir("/") != 0) {
		/* as fuse_daemonize(): the mount does not need it */
	}
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	/* Only now may the parent exit 0.  SIGPIPE is ignored by then
	 * (fuse_set_signal_handlers()): a parent killed meanwhile costs
	 * nothing here, the mount runs on. */
	if (write(report, &ok, 1) != 1) {
		/* no one is waiting any more */
	}
	close(report);
	return 0;
}
