/*-------------------------------------------------------------------------
 *
 * crc32c.h
 *	  CRC32C of page images, as PostgreSQL's pg_crc32c computes it, faster.
 *
 * fest_crc32c(data, len) equals INIT_CRC32C, COMP_CRC32C(data, len),
 * FIN_CRC32C.  Page checksums (format/page.c) are computed whenever a page
 * goes to or comes from a device; crc32c.c says why and how they are faster.
 *
 * IDENTIFICATION
 *	  src/format/crc32c.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_CRC32C_H
#define FEST_CRC32C_H

#include "festival.h"

extern uint32 fest_crc32c(const void *data, size_t len);

#endif							/* FEST_CRC32C_H */
