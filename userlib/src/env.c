// SPDX-License-Identifier: MIT
/* What the library says about a KFDPOOL_* variable it refuses. */
#include <stdio.h>

#include "internal.h"

void kp_env_invalid(const char *name, const char *value, const char *accepted)
{
	/* One line, whole, so that lines of several threads do not mix. */
	fprintf(stderr, "libkfdpool: %s=\"%s\" is not valid (accepted: %s)\n",
		name, value, accepted);
}
