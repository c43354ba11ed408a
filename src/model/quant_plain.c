/* quant_plain.c - the config.json of a dequantized model (quant_plain.h). */
#include "model/quant_plain.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonmem.h"

/* The dtype a torch_dtype names, when it is one the weights keep. */
static int
kept_dtype(const char *s, enum dtype *dt)
{
	if (!strcmp(s, "float16") || !strcmp(s, "torch.float16") ||
	    !strcmp(s, "half")) {
		*dt = DTYPE_F16;
		return 1;
	}
	if (!strcmp(s, "float32") || !strcmp(s, "torch.float32") ||
	    !strcmp(s, "float")) {
		*dt = DTYPE_F32;
		return 1;
	}
	return 0;
}

int
quant_plain_config(const char *text, size_t len, char **out,
		   size_t *out_len, enum dtype *dt)
{
	unsigned long jf = jsonmem_failures();
	json_t *j = json_loadb(text, len, 0, NULL);
	json_t *td;
	char *s = NULL;
	size_t n;

	*dt = DTYPE_BF16;
	*out = NULL;
	/* a parse short of memory may fail, or drop a byte (jsonmem.h) */
	if (jsonmem_failures() != jf) {
		json_decref(j);
		return -1;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		*out = malloc(len + 1);
		if (!*out)
			return -1;
		memcpy(*out, text, len);
		(*out)[len] = '\0';
		*out_len = len;
		return 0;
	}
	json_object_del(j, "quantization_config");
	td = json_object_get(j, "torch_dtype");
	if (!json_is_string(td))
		td = json_object_get(j, "dtype");
	if (json_is_string(td))
		kept_dtype(json_string_value(td), dt);
	else if (json_object_set_new(j, "torch_dtype",
				     json_string("bfloat16"))) {
		json_decref(j);
		return -1;
	}
	s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!s || jsonmem_failures() != jf) {
		free(s);
		return -1;
	}
	n = strlen(s);
	*out = realloc(s, n + 2);
	if (!*out) {
		free(s);
		return -1;
	}
	(*out)[n] = '\n';
	(*out)[n + 1] = '\0';
	*out_len = n + 1;
	return 0;
}
