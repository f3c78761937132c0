/* SPDX-License-Identifier: MIT */
#ifndef KFDPOOL_HIP_INTERNAL_H
#define KFDPOOL_HIP_INTERNAL_H

#ifndef KFDPOOL_HIP_OWN_TYPES
#define KFDPOOL_HIP_OWN_TYPES
#endif
#include "kfdpool_hip.h"
#include "internal.h"

#endif
