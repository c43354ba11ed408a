/* quant_bnb.h - recognising bitsandbytes' 4-bit weights (model/quant.h's
 * matchers, on a struct quant_scan): W with W.absmax, W.quant_map and
 * W.quant_state.bitsandbytes__nf4 (or __fp4: its JSON, read here), and
 * W.nested_absmax with W.nested_quant_map when nested.  Each takes the
 * model tensor i whose name ends with the quant_state's suffix (base:
 * the name's length without it).
 */
#ifndef STFS_QUANT_BNB_H
#define STFS_QUANT_BNB_H

#include <stddef.h>

struct quant_scan;

void quant_bnb_nf4(struct quant_scan *f, size_t i, size_t base);
void quant_bnb_fp4(struct quant_scan *f, size_t i, size_t base);

#endif
