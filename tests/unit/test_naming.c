/* test_naming.c - the one rule of which file names are models
 * (src/format/naming.c): every format's names, split sets' parts, the
 * models that yield, the suffix a model's directory leaves out, names
 * that only look like one.  Links format only.
 */
#include <check.h>
#include <string.h>

#include "format/naming.h"
#include "suites.h"

/* naming_of(path) is role, yields and suffix; part and parts 0. */
static void
is(const char *path, enum naming_role role, int yields, size_t suffix)
{
	struct naming n;

	ck_assert_msg(naming_of(path, &n) == role, "%s: role %d", path,
		      (int)n.role);
	ck_assert_int_eq(n.role, role);
	ck_assert_msg(n.yields == yields, "%s: yields %d", path, n.yields);
	ck_assert_msg(n.suffix == suffix, "%s: suffix %zu", path, n.suffix);
}

START_TEST(test_formats)
{
	is("model.safetensors", NAMING_MODEL, 0, 12);
	is("a/b/model.safetensors.index.json", NAMING_INDEX, 0, 23);
	is("s3://b/k/tiny-Q4_K_M.gguf", NAMING_MODEL, 0, 5);
	is("pytorch_model.bin", NAMING_MODEL, 1, 4);
	is("x/pytorch_model-00001-of-00002.bin", NAMING_MODEL, 1, 4);
	is("pytorch_model.bin.index.json", NAMING_INDEX, 1, 15);
	/* checkpoints: a model only when named */
	is("optimizer.pt", NAMING_CHECKPOINT, 0, 3);
	is("rng_state.pth", NAMING_CHECKPOINT, 0, 4);
	is("training_args.bin", NAMING_CHECKPOINT, 0, 4);
	/* the last component decides */
	is("pytorch_model.bin/readme.txt", NAMING_NONE, 0, 0);
	is("pytorch_model/training.bin", NAMING_CHECKPOINT, 0, 4);
	/* no stem, no format's name */
	is(".safetensors", NAMING_NONE, 0, 0);
	is("dir/.gguf", NAMING_NONE, 0, 0);
	is("config.json", NAMING_NONE, 0, 0);
	is("model.safetensors.bak", NAMING_NONE, 0, 0);
	is("MODEL.SAFETENSORS", NAMING_NONE, 0, 0);
	is("", NAMING_NONE, 0, 0);
}
END_TEST

START_TEST(test_split_sets)
{
	struct naming n;

	ck_assert_int_eq(naming_of("d/m-00001-of-00003.gguf", &n),
			 NAMING_MODEL);
	ck_assert_uint_eq(n.part, 1);
	ck_assert_uint_eq(n.parts, 3);
	ck_assert_uint_eq(n.suffix, strlen("-00001-of-00003.gguf"));
	ck_assert_int_eq(naming_of("m-00003-of-00003.gguf", &n), NAMING_PART);
	ck_assert_uint_eq(n.part, 3);
	/* read by GGUF when no format claims its bytes, as every .gguf */
	ck_assert_str_eq(n.reader, "gguf");
	naming_of("model.safetensors", &n);
	ck_assert_ptr_null(n.reader);
	/* PyTorch's names: read by it, so that random bytes named .bin
	 * get its error, not safetensors' */
	naming_of("optimizer.pt", &n);
	ck_assert_str_eq(n.reader, NAMING_TORCH);
	ck_assert_int_eq(naming_of("epoch=3-step=60.ckpt", &n),
			 NAMING_CHECKPOINT);
	ck_assert_str_eq(n.reader, NAMING_TORCH);
	naming_of("pytorch_model-00001-of-00002.bin", &n);
	ck_assert_str_eq(n.reader, NAMING_TORCH);
	/* not a split name: a whole file */
	ck_assert_int_eq(naming_of("m-00004-of-00003.gguf", &n), NAMING_MODEL);
	ck_assert_uint_eq(n.parts, 0);
	ck_assert_uint_eq(n.suffix, 5);
	ck_assert_int_eq(naming_of("m-00000-of-00003.gguf", &n), NAMING_MODEL);
	ck_assert_int_eq(naming_of("m-0001-of-00003.gguf", &n), NAMING_MODEL);
	ck_assert_int_eq(naming_of("d/-00002-of-00003.gguf", &n),
			 NAMING_MODEL);
	ck_assert_uint_eq(n.parts, 0);
	/* a safetensors shard's name is a model's: an index names it */
	ck_assert_int_eq(naming_of("model-00002-of-00003.safetensors", &n),
			 NAMING_MODEL);
	ck_assert_uint_eq(n.parts, 0);
}
END_TEST

START_TEST(test_listed)
{
	struct naming n;

	ck_assert_int_eq(naming_listed("a.safetensors"), 1);
	ck_assert_int_eq(naming_listed("a.safetensors.index.json"), 1);
	ck_assert_int_eq(naming_listed("a.gguf"), 1);
	ck_assert_int_eq(naming_listed("a-00002-of-00002.gguf"), 1);
	ck_assert_int_eq(naming_listed("pytorch_model.bin"), 1);
	ck_assert_int_eq(naming_listed("pytorch_model.bin.index.json"), 1);
	ck_assert_int_eq(naming_listed("optimizer.pt"), 0);
	ck_assert_int_eq(naming_listed("README.md"), 0);
	/* the configs beside models, never models themselves */
	ck_assert_int_eq(naming_listed("a/config.json"), 1);
	ck_assert_int_eq(naming_listed("quantize_config.json"), 1);
	ck_assert_int_eq(naming_config("a/b/quantize_config.json"), 1);
	ck_assert_int_eq(naming_config("generation_config.json"), 0);
	ck_assert_int_eq(naming_config("config.json.bak"), 0);
	ck_assert_int_eq(naming_of("config.json", &n), NAMING_NONE);
}
END_TEST

Suite *
naming_suite(void)
{
	Suite *s = suite_create("naming");
	TCase *tc = tcase_create("naming");

	tcase_add_test(tc, test_formats);
	tcase_add_test(tc, test_split_sets);
	tcase_add_test(tc, test_listed);
	suite_add_tcase(s, tc);
	return s;
}
