/* hub_conf.h - reading the Hub's settings (hub_conf.c) into hub_cfg
 * (hub_int.h), below hub.c, hub_http.c and hub_src.c, which read them.
 */
#ifndef STFS_HUB_CONF_H
#define STFS_HUB_CONF_H

struct err;

/* Fill hub_cfg from the environment and the token file, once (later
 * calls return at once).  0 or -1 with *e naming the variable or file at
 * fault. */
int hub_conf_load(struct err *e);

#endif
