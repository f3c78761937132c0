// SPDX-License-Identifier: GPL-2.0-only
/*
 * Before 6.13 MODULE_IMPORT_NS() takes a bare identifier; from 6.13 on it
 * takes a string, and a bare identifier no longer compiles.
 */
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
