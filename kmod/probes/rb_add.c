// SPDX-License-Identifier: GPL-2.0-only
/*
 * rb_add() and rb_find() (a node by a less() or cmp() callback) came
 * together in 5.12; before that a caller walks the tree itself.
 */
#include <linux/rbtree.h>

static bool kfdpool_probe_less(struct rb_node *a, const struct rb_node *b)
{
	return a < b;
}

void kfdpool_probe(struct rb_node *node, struct rb_root *root);
void kfdpool_probe(struct rb_node *node, struct rb_root *root)
{
	rb_add(node, root, kfdpool_probe_less);
}
