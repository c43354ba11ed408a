/* suites.h - every Check suite of the unit tests; test_main.c runs them. */
#ifndef STFS_TEST_SUITES_H
#define STFS_TEST_SUITES_H

#include <check.h>

Suite *jscan_suite(void);	/* test_jscan.c */
Suite *header_suite(void);	/* test_header.c */
Suite *shards_suite(void);	/* test_shards.c */
Suite *view_suite(void);	/* test_view.c */
Suite *npy_suite(void);		/* test_npy.c */
Suite *txt_suite(void);		/* test_txt.c */
Suite *layout_suite(void);	/* test_layout.c */
Suite *repack_suite(void);		/* test_repack.c */
Suite *catalog_suite(void);	/* test_catalog.c */
Suite *files_suite(void);	/* test_files.c */
Suite *srcpool_suite(void);	/* test_srcpool.c */
Suite *memo_suite(void);	/* test_memo.c */
Suite *png_suite(void);		/* test_png.c */
Suite *s3conf_suite(void);	/* test_s3conf.c */
Suite *http_suite(void);	/* test_http.c */
Suite *pace_suite(void);	/* test_pace.c */
Suite *hub_client_suite(void);	/* test_hub_client.c */
Suite *s3_client_suite(void);	/* test_s3_client.c */
Suite *s3_prefix_suite(void);	/* test_s3_prefix.c */
Suite *tier_suite(void);	/* test_tier.c */
Suite *nametab_suite(void);	/* test_nametab.c */
Suite *text_suite(void);	/* test_text.c */
Suite *msglog_suite(void);	/* test_msglog.c */
Suite *parallel_suite(void);	/* test_parallel.c */
Suite *jsonmem_suite(void);	/* test_jsonmem.c */
Suite *pickle_suite(void);	/* test_pickle.c */
Suite *quant_suite(void);	/* test_quant.c */
Suite *wquant_suite(void);	/* test_wquant.c */
Suite *torch_affine_suite(void);	/* test_torch_affine.c */
Suite *gather_suite(void);	/* test_gather.c */
Suite *torch_suite(void);	/* test_torch.c */
Suite *naming_suite(void);	/* test_naming.c */
Suite *tensor_size_suite(void);	/* test_tensor_size.c */

#endif
