/*-------------------------------------------------------------------------
 *
 * festival.h
 *	  Definitions shared by every layer of festival.
 *
 * festival keeps spatial indices in files outside PostgreSQL.  Its layers,
 * one directory of src/ each, are listed from the top in DESIGN.md
 * section 1: the SQL surface, the index structures, the node stores, the
 * page I/O chain (tiers, page caches, tracing, devices), the on-disk
 * formats, the log, geometry, statistics, generators and options.  Each
 * layer includes only the headers of its own layer and those below it
 * (scripts/check-layers); this header is below them all.
 *
 * IDENTIFICATION
 *	  src/festival.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FESTIVAL_H
#define FESTIVAL_H

#include "postgres.h"

/*
 * Page images are written with the host's byte order and read back with a
 * checksum and magic check.  Only little-endian hosts are supported, so an
 * index file can move between x86-64 and arm64 machines unchanged.
 */
#ifdef WORDS_BIGENDIAN
#error "festival's on-disk formats are little-endian; big-endian hosts are not supported"
#endif

/* A page number inside one index file; byte offset = page * page_size. */
typedef uint64 PageId;

/* Pages 0 and 1 hold the two meta copies, so 0 never names a node. */
#define InvalidPageId			((PageId) 0)
#define FEST_META_PAGES			2
#define FEST_FIRST_DATA_PAGE	((PageId) FEST_META_PAGES)

/* Deepest tree the counters and node paths are sized for. */
#define FEST_MAX_LEVELS			32

/* Page sizes accepted by every structure (bytes). */
#define FEST_MIN_PAGE_SIZE		1024
#define FEST_MAX_PAGE_SIZE		(1024 * 1024)
#define FEST_DEFAULT_PAGE_SIZE	4096
/* O_DIRECT needs offsets and lengths aligned to the logical block size. */
#define FEST_PAGE_SIZE_MULTIPLE	512
/* Buffers used with O_DIRECT are aligned to this many bytes. */
#define FEST_IO_ALIGN			4096

/* Longest index or device name; names become file and directory names. */
#define FEST_NAME_MAXLEN		63

#endif							/* FESTIVAL_H */
