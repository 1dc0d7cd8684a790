/*-------------------------------------------------------------------------
 *
 * meta.h
 *	  The meta pages of an index file.
 *
 * Pages 0 and 1 each hold a copy of the meta data.  Generation g goes to
 * page g % 2 and a reader takes the valid copy with the highest generation.
 * Every meta write is a pair: the same state S_k is written twice, as
 * generation 2k+1 into page 1 and then as generation 2k+2 into page 0
 * (two writes in that order; the caller syncs after both).  So whenever one
 * copy is damaged, the other holds the latest acknowledged state:
 *	- the first write torn: page 0 still holds S_{k-1} (generation 2k), the
 *	  latest completed state; the update in progress was not acknowledged;
 *	- the second write torn: page 1 holds S_k (generation 2k+1);
 *	- either copy damaged later (bit rot, a stray write): the other one
 *	  holds S_k.
 * The argument needs no order between the two writes (a write-back cache
 * below may reorder them): if only one of them is done and the other torn,
 * the done one holds S_k or the other slot still holds S_{k-1}, and S_k was
 * not yet acknowledged; it only needs the state to count as written once
 * both writes are.  With alternating single writes the surviving copy would
 * be one update old, and an old copy saying "clean" would hide a log that must be
 * replayed, or an old page count would cut off pages in use.  Two damaged
 * copies leave no valid meta page: an error, never a guess.  The price is
 * a second page write per meta update (meta_writes counts both).  Each copy is a normal page (format/page.h) of kind
 * FEST_PAGE_META whose body is:
 *
 *	offset size field
 *	     0    8 magic			"FESTIVAL"
 *	     8    4 format_version	FEST_META_VERSION
 *	    12    4 page_size		bytes
 *	    16    8 generation		incremented on every meta write
 *	    24    8 index_uid		random, fixed at creation
 *	    32   16 structure		structure name, NUL-padded ("rtree")
 *	    48    8 root			root page
 *	    56    4 height			levels; 1 = the root is a leaf
 *	    60    4 flags			FEST_META_* below
 *	    64    4 srid			SRID of the indexed geometries (if HAS_SRID)
 *	    68    4 config_len		bytes of configuration text
 *	    72    8 page_count		pages in the file, meta pages included
 *	    80    8 free_head		first page of the free list, 0 = none
 *	    88    8 free_count		pages on the free list
 *	    96    8 entry_count		leaf entries (valid if ENTRIES_VALID)
 *	   104    8 owner_database_uid	the owning database's random identifier
 *	   112    8 created_at		creation time, Unix microseconds
 *	   120   64 structure_state	owned by the structure
 *	   184    8 owner_system_id	the owning cluster's system identifier
 *	   192    4 owner_database_oid	the owning database's OID
 *	   196    4 reserved		zero
 *	   200    n config			complete configuration as JSON text
 *
 * The owner (FestFileOwner) says which database may open, change and drop
 * the file: one database of one cluster, told apart by its OID and a
 * random identifier the database keeps in festival.database_identity,
 * which neither pg_dump nor CREATE DATABASE ... TEMPLATE carries over
 * (docs/durability.md, "One database owns an index's files").  The OID
 * and the identifier name the database; the system identifier says which
 * cluster it was in when it last wrote the owner (pg_upgrade keeps the
 * database but makes a new cluster).  All three zero: no owner recorded (a
 * file written in version 2).
 *
 * Meta format versions: 3 adds the owner (at 104, where version 2 had 8
 * reserved zero bytes, and at 184, moving the configuration to 200).
 * Version 2 files are read (without an owner) and written back as version
 * 3 at their next meta write.  Version 2 introduced the paired writes
 * above; version 1 wrote single copies alternately, so its surviving copy
 * could be one update old: a file of version 1 is refused at open with an
 * error that says so (fest_meta_read), never read as if it were paired.
 *
 * The clean flag is cleared (and the meta written) before the first page
 * write after an open or a flush, and set again by flush and close once all
 * pages are written and synced.  Opening an index whose clean flag is clear
 * therefore means a session ended without closing it.
 *
 * IDENTIFICATION
 *	  src/format/meta.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_META_H
#define FEST_META_H

#include "festival.h"
#include "device/pageio.h"

#define FEST_META_MAGIC			"FESTIVAL"
#define FEST_META_VERSION		3	/* paired copies, owner (above) */
#define FEST_META_VERSION_NO_OWNER 2	/* paired copies, config at 184 */
#define FEST_STRUCTURE_NAMELEN	16
#define FEST_STRUCTURE_STATE_SIZE 64

/* flags */
#define FEST_META_CLEAN			0x0001	/* every change written and synced */
#define FEST_META_ALL_POINTS	0x0002	/* every entry so far was a POINT */
#define FEST_META_HAS_SRID		0x0004	/* srid holds the indexed SRID */
#define FEST_META_ENTRIES_VALID	0x0008	/* entry_count is exact */
#define FEST_META_BUILDING		0x0010	/* a build began and has not finished */
#define FEST_META_DAMAGED		0x0020	/* a write failed while overwriting pages */

typedef struct FestMetaDisk
{
	char		magic[8];
	uint32		format_version;
	uint32		page_size;
	uint64		generation;
	uint64		index_uid;
	char		structure[FEST_STRUCTURE_NAMELEN];
	uint64		root;
	uint32		height;
	uint32		flags;
	int32		srid;
	uint32		config_len;
	uint64		page_count;
	uint64		free_head;
	uint64		free_count;
	uint64		entry_count;
	uint64		owner_database_uid;
	int64		created_at;
	uint8		structure_state[FEST_STRUCTURE_STATE_SIZE];
	/* version 2 ends here: its config text follows at 184 */
	uint64		owner_system_id;
	uint32		owner_database_oid;
	uint32		reserved;
	/* config text follows */
} FestMetaDisk;

StaticAssertDecl(sizeof(FestMetaDisk) == 200, "FestMetaDisk layout changed");
StaticAssertDecl(offsetof(FestMetaDisk, owner_system_id) == 184,
				 "a version 2 meta record ends where the owner's OID begins");

/* The database that owns an index file; all zero = none recorded. */
typedef struct FestFileOwner
{
	uint64		system_id;		/* the cluster (GetSystemIdentifier) */
	uint64		database_uid;	/* random, per database */
	uint32		database_oid;
} FestFileOwner;

/* The meta data of an open index, in memory. */
typedef struct FestMeta
{
	uint64		generation;
	uint64		index_uid;
	char		structure[FEST_STRUCTURE_NAMELEN + 1];
	uint32		page_size;
	PageId		root;
	uint32		height;
	uint32		flags;
	int32		srid;
	uint64		page_count;
	PageId		free_head;
	uint64		free_count;
	uint64		entry_count;
	int64		created_at;
	uint8		structure_state[FEST_STRUCTURE_STATE_SIZE];
	FestFileOwner owner;
	char	   *config;			/* JSON text, palloc'd */
	/* set by fest_meta_read, cleared by fest_meta_write (not on disk) */
	int			damaged_slot;	/* the copy found damaged, or -1 */
	const char *damaged_reason; /* why (static text) */
} FestMeta;

/* Largest configuration text a page of this size can hold. */
#define FEST_META_CONFIG_MAX(page_size) \
	((page_size) - FEST_PAGE_HEADER_SIZE - sizeof(FestMetaDisk))

extern void fest_meta_write(PageIO *io, FestMeta *meta);
extern void fest_meta_read(PageIO *io, const char *index_name, FestMeta *meta);
extern void fest_meta_warn_damaged(const FestMeta *meta, const char *index_name);
extern void fest_meta_check_copies(PageIO *io, const char *reasons[FEST_META_PAGES]);
extern bool fest_meta_peek(const char *head, size_t len, FestMeta *meta);
extern bool fest_owner_is_set(const FestFileOwner *owner);
extern bool fest_owner_same_database(const FestFileOwner *a, const FestFileOwner *b);

#endif							/* FEST_META_H */
