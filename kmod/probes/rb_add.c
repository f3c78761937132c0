// SPDX-License-Identifier: GPL-2.0-only
/*
 * rb_add() inserts a node by a less() callback from 5.12 on; before that
 * a caller walks the tree and links the node itself.
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
