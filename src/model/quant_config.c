/* quant_config.c - config.json's quantization_config and
 * quantize_config.json beside a model (see quant_config.h). */
#include "model/quant_config.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "model/model_beside.h"

static int64_t
int_of(json_t *o, const char *k1, const char *k2)
{
	json_t *v = json_object_get(o, k1);

	if (!json_is_integer(v) && k2)
		v = json_object_get(o, k2);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static int
str_is(json_t *o, const char *k, const char *want)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) && strcasecmp(json_string_value(v), want) == 0;
}

/* Two positive integers of an array, into out. */
static void
pair_of(json_t *a, uint64_t out[2])
{
	json_t *x = json_array_get(a, 0), *y = json_array_get(a, 1);

	if (json_array_size(a) == 2 && json_is_integer(x) &&
	    json_is_integer(y) && json_integer_value(x) > 0 &&
	    json_integer_value(y) > 0) {
		out[0] = (uint64_t)json_integer_value(x);
		out[1] = (uint64_t)json_integer_value(y);
	}
}

/* compressed-tensors: the weights of the first config group. */
static void
compressed_tensors(json_t *q, struct quant_config *c)
{
	json_t *groups = json_object_get(q, "config_groups"), *g, *w, *v;
	const char *k;
	size_t i;

	v = json_object_get(q, "format");
	if (json_is_string(v)) {
		snprintf(c->ct_format, sizeof(c->ct_format), "%s",
			 json_string_value(v));
		for (i = 0; c->ct_format[i]; i++)
			c->ct_format[i] = (char)tolower(
				(unsigned char)c->ct_format[i]);
	}
	json_object_foreach(groups, k, g) {
		w = json_object_get(g, "weights");
		if (!json_is_object(w))
			continue;
		c->bits = (unsigned)int_of(w, "num_bits", NULL);
		c->group_size = int_of(w, "group_size", NULL);
		pair_of(json_object_get(w, "block_structure"), c->block);
		v = json_object_get(w, "symmetric");
		c->symmetric = json_is_boolean(v) ? json_is_true(v) : -1;
		return;
	}
}

static void
take(json_t *q, struct quant_config *c)
{
	json_t *m = json_object_get(q, "quant_method");
	size_t i;

	if (json_is_string(m)) {
		snprintf(c->method, sizeof(c->method), "%s",
			 json_string_value(m));
		for (i = 0; c->method[i]; i++)
			c->method[i] = (char)tolower((unsigned char)c->method[i]);
	}
	c->bits = (unsigned)int_of(q, "bits", "w_bit");
	c->group_size = int_of(q, "group_size", "q_group_size");
	c->gptq_v2 = str_is(q, "checkpoint_format", "gptq_v2");
	c->awq_gemv = str_is(q, "version", "gemv");
	pair_of(json_object_get(q, "weight_block_size"), c->block);
	if (strcmp(c->method, "compressed-tensors") == 0)
		compressed_tensors(q, c);
}

int
quant_config_read(const struct model *m, struct quant_config *c)
{
	json_t *cfg, *q;

	memset(c, 0, sizeof(*c));
	c->symmetric = -1;
	if (model_beside_json(m, "config.json", &cfg))
		return -1;
	q = json_object_get(cfg, "quantization_config");
	if (json_is_object(q)) {
		take(q, c);
		c->file = "config.json";
	} else {
		json_decref(cfg);
		if (model_beside_json(m, "quantize_config.json", &cfg))
			return -1;
		if (cfg) {
			take(cfg, c);
			c->file = "quantize_config.json";
		}
	}
	json_decref(cfg);
	if (!c->file)
		c->why_none = model_beside_known(m) ?
			"no config.json with a quantization_config nor "
			"quantize_config.json beside the model" :
			"a model named by its URL has no folder to find "
			"config.json or quantize_config.json in";
	return 0;
}
