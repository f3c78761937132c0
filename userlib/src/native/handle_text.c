// SPDX-License-Identifier: MIT
/*
 * Pool handles as text: 128 lowercase hex digits, for channels that carry
 * strings (environment variables, command lines, job scheduler metadata).
 */
#include <string.h>

#include "kfdpool.h"
#include "internal.h"

KFDPOOL_EXPORT int kfdpool_handle_format(const struct kfdpool_pool_handle *h,
					 char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = (const unsigned char *)h;
	size_t i;

	if (!h || !buf)
		return -EINVAL;
	if (len < KFDPOOL_HANDLE_TEXT_LEN + 1)
		return -ENOSPC;
	for (i = 0; i < sizeof(*h); i++) {
		buf[2 * i] = digits[b[i] >> 4];
		buf[2 * i + 1] = digits[b[i] & 0xf];
	}
	buf[KFDPOOL_HANDLE_TEXT_LEN] = 0;
	return KFDPOOL_HANDLE_TEXT_LEN;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

KFDPOOL_EXPORT int kfdpool_handle_parse(const char *text,
					struct kfdpool_pool_handle *h)
{
	unsigned char b[sizeof(*h)];
	size_t i;

	if (!text || !h || strlen(text) != KFDPOOL_HANDLE_TEXT_LEN)
		return -EINVAL;
	for (i = 0; i < sizeof(b); i++) {
		int hi = hexval(text[2 * i]), lo = hexval(text[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		b[i] = (unsigned char)(hi << 4 | lo);
	}
	memcpy(h, b, sizeof(b));
	return 0;
}
