/* display.c - see display.h.  In the model layer, above the HTTP client
 * whose URL parser it uses: the sources below never show names. */
#include "model/display.h"

#include <stdlib.h>
#include <string.h>

#include "source/source.h"
#ifdef STFS_HAVE_HTTP
#include "source/http/http_url.h"
#endif

char *
display_name(const char *name)
{
	if (!source_is_url(name))
		return strdup(name);
#ifdef STFS_HAVE_HTTP
	return http_url_redact(name);
#else
	return strndup(name, strcspn(name, "?#"));
#endif
}
