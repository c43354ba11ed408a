/* display.h - a SOURCE or file name as it may be shown: in messages,
 * __summary__.json, .stfs/stats.json and the mount's fsname.
 */
#ifndef STFS_DISPLAY_H
#define STFS_DISPLAY_H

/* name without the secrets a URL may carry: no user info, query or
 * fragment (presigned URLs keep credentials there, issue 14.5); other
 * names as they are.  Malloc'd; NULL without memory. */
char *display_name(const char *name);

#endif
