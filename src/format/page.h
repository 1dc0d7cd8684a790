/*-------------------------------------------------------------------------
 *
 * page.h
 *	  Layout of every page of an index file, and its checksum.
 *
 * An index file is an array of pages of the index's page size; page N starts
 * at byte N * page_size (64-bit offsets).  Pages 0 and 1 are the two meta
 * copies (format/meta.h), every other page is a node or a free page.  Each
 * page starts with this 32-byte header:
 *
 *	offset size field
 *	     0    4 checksum	CRC32C of bytes [4, page_size)
 *	     4    2 magic		0xF35A
 *	     6    1 version		FEST_FORMAT_VERSION
 *	     7    1 kind		FestPageKind
 *	     8    8 page_id		the page's own number (catches misdirected I/O)
 *	    16    2 level		node height, 0 = leaf
 *	    18    2 flags		owned by the structure, but for bit 15
 *							(FEST_NODE_RESIDENT)
 *	    20    4 nentries	number of entries in a node
 *	    24    8 link		free page: next free page (0 = end);
 *							node: owned by the structure
 *
 * Node entries follow the header, packed, in the structure's own entry
 * format (index/rtree.h for the R-tree).  Bytes after the last entry are
 * zero.  All integers are little-endian.
 *
 * Every read verifies magic, version, page id and checksum; a page that
 * fails is reported as ERRCODE_DATA_CORRUPTED naming the index and page.
 * The checksum is computed once per image that comes from the device: a
 * page cache checks it when the page arrives (or, for a page written into
 * the cache, at its first hit) and marks the request verified
 * (device/pageio.h), so readers of a cached image check the header only
 * (fest_page_verify_known).  The write-through store hands its pages to
 * such a cache unsealed (fest_page_write_unsealed): the cache holds them
 * as verified with a stale checksum field and seals each once, when it
 * leaves for the device; every other PageIO gets them sealed.
 *
 * IDENTIFICATION
 *	  src/format/page.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_PAGE_H
#define FEST_PAGE_H

#include "festival.h"

#include "device/pageio.h"

#define FEST_PAGE_MAGIC			0xF35A
#define FEST_FORMAT_VERSION		1

/*
 * Node flag: the structure holds this node in memory and reads it only to
 * make that copy (the grid file's root pages, index/gridfile_root.c: the
 * thesis's root directory in RAM), so its reads are no accesses for the
 * tier layer's hot-page detector (tier/tier.c), which neither models it
 * nor takes it for the parent of the pages read below it.
 */
#define FEST_NODE_RESIDENT		0x8000

typedef enum FestPageKind
{
	FEST_PAGE_META = 1,
	FEST_PAGE_NODE = 2,
	FEST_PAGE_FREE = 3
} FestPageKind;

typedef struct FestPageHeader
{
	uint32		checksum;
	uint16		magic;
	uint8		version;
	uint8		kind;
	uint64		page_id;
	uint16		level;
	uint16		flags;
	uint32		nentries;
	uint64		link;
} FestPageHeader;

#define FEST_PAGE_HEADER_SIZE	32
StaticAssertDecl(sizeof(FestPageHeader) == FEST_PAGE_HEADER_SIZE,
				 "FestPageHeader must be 32 bytes");

/* Outcome of verifying a page image read from a device. */
typedef enum FestPageCheck
{
	FEST_PAGE_OK = 0,
	FEST_PAGE_NEVER_WRITTEN,	/* all zeros: a hole in the file */
	FEST_PAGE_BAD_MAGIC,
	FEST_PAGE_BAD_VERSION,
	FEST_PAGE_BAD_CHECKSUM,
	FEST_PAGE_WRONG_ID,
	FEST_PAGE_WRONG_KIND,
	FEST_PAGE_IMPOSSIBLE		/* valid checksum, impossible level or count */
} FestPageCheck;

#define FestPageGetHeader(page)	((FestPageHeader *) (page))
#define FestPageGetBody(page)	((char *) (page) + FEST_PAGE_HEADER_SIZE)

extern void fest_page_init(char *page, uint32 page_size, PageId page_id,
						   FestPageKind kind);
extern void fest_page_seal(char *page, uint32 page_size);
extern bool fest_page_write_unsealed(PageIO *io, PageIORequest *reqs, int n,
									 bool donate);
extern FestPageCheck fest_page_verify(const char *page, uint32 page_size,
									  PageId expected_id,
									  FestPageKind expected_kind);
extern FestPageCheck fest_page_verify_known(const char *page, uint32 page_size,
											PageId expected_id,
											FestPageKind expected_kind,
											bool checksum_known);
extern bool fest_page_checksum_ok(const char *page, uint32 page_size);
extern const char *fest_page_check_message(FestPageCheck check);
extern void fest_page_report_corrupt(FestPageCheck check,
									 const char *index_name, PageId page_id,
									 const char *page, uint32 page_size) pg_attribute_noreturn();

/*
 * The one report of a damaged index (format/page.c): a node store, a
 * structure or a traversal that finds a page it cannot use raises it, so
 * every such error has the same SQLSTATE, message, and way out.
 */
extern void fest_report_corrupt(const char *index_name, PageId page,
								const char *detail) pg_attribute_noreturn();
extern void fest_report_page_out_of_range(const char *index_name, PageId page,
										  uint64 page_count) pg_attribute_noreturn();

#endif							/* FEST_PAGE_H */
