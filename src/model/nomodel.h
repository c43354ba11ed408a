/* nomodel.h - the error of a directory that holds no model, which says
 * what it does hold when that is a checkpoint (ckpt.pt, optimizer.pt,
 * model.pth, training_args.bin): those are models only when named by
 * their own path (format/naming.h), which a user who put one in a folder
 * would not guess.
 */
#ifndef STFS_NOMODEL_H
#define STFS_NOMODEL_H

struct err;

/* Record ERR_USAGE "no model (...) in this directory" (below: "or below
 * it") at dir, naming the checkpoints dir holds, if any, and how to open
 * one, or the later part of a GGUF split set it holds without the first:
 * which part of how many, and every part missing.  Returns -1. */
int nomodel_set(struct err *e, const char *dir, int below);

#endif
