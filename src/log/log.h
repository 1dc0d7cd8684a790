/*-------------------------------------------------------------------------
 *
 * log.h
 *	  The redo log of the buffering node stores (FAST, eFIND, the FOR-tree's
 *	  buffer) and the write-through store's journal.
 *
 * Every change a buffering store keeps in memory is appended to the log
 * of its index, so that opening the index after a crash rebuilds the
 * buffer (restart, eFIND's algorithm 7).  The log is a file next to the
 * index file (<index file>.log), written sequentially through the OS
 * cache and synced as the setting festival.log_sync says.
 *
 * Layout:
 *
 *	header (512 bytes, offset 0)
 *	     0    8 magic		"FESTLOG\0"
 *	     8    4 version		FEST_LOG_VERSION (3)
 *	    12    4 header_size	512
 *	    16    8 index_uid	the index's meta index_uid
 *	    24    8 first_lsn	sequence number of the first record
 *	    32    4 crc			CRC32C of bytes [0, 44) with this field zero
 *	    36    4 writer		LogWriter: whose payloads the records carry
 *	    40    4 writer_version	that writer's payload format
 *								(log_payload_version: F 2, E and J 1)
 *	    44  468 zero
 *	A log is opened only by the writer that made it, in a payload format
 *	it knows (1 up to its own): a log of another writer or a newer format
 *	is refused as corrupted.  A log in an older format of its writer (F 1:
 *	MOD items SET and TRUNCATE only) replays as it is; opening it first
 *	rewrites the header (in place, synced) with the current format.
 *	(Version 2, before the writer fields, is refused the same way; an index
 *	file of that age has meta format 1, refused first: format/meta.h.)
 *
 *	records, from offset 512, each starting at a multiple of 8:
 *	     0    4 magic		FEST_LOG_RECORD_MAGIC
 *	     4    4 length		header + payload bytes (padding excluded)
 *	     8    8 lsn			sequence number, +1 per record
 *	    16    4 crc			CRC32C of the record with this field zero
 *	    20    1 type		LogRecordType
 *	    21    1 flags		owned by the writer
 *	    22    2 level		node level, when about a node
 *	    24    8 page		page, when about a page
 *	    32    4 count		items in the payload
 *	    36    4 reserved	zero
 *	    40    n payload		by type, below
 *
 * Payloads, by type (integers little-endian; E is the entry size of the
 * record's level, NodeOps.entry_size, entries in the structure's own
 * format; a pad is zero).  Writers: F FAST, E eFIND, J the write-through
 * store's journal; the FOR-tree's buffer (writer 4) writes FAST's records
 * and payloads, so F stands for it too.
 *
 *	COMMIT (F E J)	none, count 0.  Closes the group of one modification.
 *	META (F E J)	a LoggedMeta, 120 bytes (nodestore/nodestore.h: root, page
 *			count, free list, entry count, height, flags, SRID, the
 *			structure's 64 bytes), count 0: the meta after the modification.
 *	PAGE (J)	the page's whole image, page-size bytes, as the store handed it
 *			to the page I/O chain (its checksum field may be stale: replay
 *			seals the image again); the header's page and level name it,
 *			flags bit 0 (LOG_PAGE_FREE) marks a free-list page, count 0.
 *	NEW (F)		count entries of E bytes: the whole node (level, page in the
 *			header); it replaces whatever the buffer held for the page.
 *	NEW (E)		none, count 0: the page starts afresh; the MOD record that
 *			follows holds its entries.
 *	MOD (F)		count items of 8 + E bytes (FastItemHeader, nodestore/fast.c):
 *			     0    4 position	SET, INSERT, DELETE: the entry's position;
 *								TRUNCATE: the new entry count
 *			     4    1 kind		FastItemKind: 0 SET (entry position is now
 *								the entry), 1 TRUNCATE, 2 INSERT (the entry
 *								goes in at position, the entries from position
 *								on move one place right), 3 DELETE (the entry
 *								at position goes, later ones move one place
 *								left); 2 and 3 from payload format 2 on
 *			     5    3 pad
 *			     8    E entry		SET, INSERT: the entry; TRUNCATE, DELETE: zero
 *								(format 1 wrote spaces for TRUNCATE: ignored)
 *			applied in order (Sarwat et al. 2013's modification list); a
 *			kind above 3, or an item that does not fit the node, is a
 *			malformed record (ERRCODE_DATA_CORRUPTED).
 *	MOD (E)		count items of 8 + E bytes (EfindItemHeader, nodestore/efind.c):
 *			     0    4 occ		rank among entries of equal identity
 *								(NodeOps.compare_identity), in content order
 *			     4    1 present	1: the entry is (now) in the node; 0: removed
 *			     5    3 pad
 *			     8    E entry
 *			each item is the latest version of its key (Carniel et al. 2019).
 *	DEL (F E)	8 bytes: the next page of the free list after this one
 *			(BufPage.link), count 0: the node is freed, its page heads the
 *			free list.
 *	FLUSH_BEGIN (F E)	count items of 16 bytes (FlushIntentItem,
 *			nodestore/buffered.c), one per page of the flushing unit about to be
 *			written, in page order:
 *			     0    8 page
 *			     8    4 checksum	the page header's checksum field of the
 *								image about to be written
 *			    12    4 pad
 *			a page whose stored image carries this checksum at replay holds
 *			every earlier record of it, which replay then drops.
 *	FLUSH (F E)	count page numbers of 8 bytes: the pages written and synced;
 *			replay drops their earlier records.
 *	END (F E J)	none, count 0, lsn the next record's: written after the
 *			records of every write, in the same pwrite, and overwritten by
 *			the next write, which starts where it stood.  So the last group
 *			is followed by a valid record too, and damage inside it is told
 *			apart from a torn write (which leaves no END after it: a write
 *			that tears lands at most its first half, and overwrites the
 *			previous END, which began where it begins).
 *
 * The records of one modification form a group closed by a COMMIT record;
 * replay applies complete groups only, so a modification is either wholly
 * recovered or not at all.  A valid END ends the log.  A damaged or
 * incomplete record with no valid record after it (a torn write) ends it
 * too: it and anything after it are dropped, and an END is written where
 * the log now ends.  A damaged record followed by a valid one (an END
 * included) is corruption and an error.  Logs written before END existed
 * end at their last record, and are read the same way.
 *
 * IDENTIFICATION
 *	  src/log/log.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_LOG_H
#define FEST_LOG_H

#include "festival.h"
#include "stats/stats.h"

#define FEST_LOG_MAGIC			"FESTLOG"
#define FEST_LOG_VERSION		3
#define LOG_PAYLOAD_VERSION_FIRST	1	/* the oldest payload format read */
#define FEST_LOG_HEADER_SIZE	512
#define FEST_LOG_RECORD_MAGIC	0x43455246	/* "FREC" */
#define FEST_LOG_ALIGN			8

typedef enum LogRecordType
{
	LOG_COMMIT = 1,				/* end of a modification's group */
	LOG_META = 2,				/* the meta data after the modification */
	LOG_NEW = 3,				/* a node created in the buffer */
	LOG_MOD = 4,				/* buffered changes to a node's entries */
	LOG_DEL = 5,				/* a node deleted (page -> free list) */
	LOG_FLUSH = 6,				/* pages written to the index file */
	LOG_FLUSH_BEGIN = 7,		/* pages about to be written, with the
								 * checksums of their new images */
	LOG_PAGE = 8,				/* a page's whole new image (the
								 * write-through store's journal) */
	LOG_END = 9					/* where the log ends (never in a group) */
} LogRecordType;

/* Who writes a log, and so what its payloads hold (header field writer). */
typedef enum LogWriter
{
	LOG_WRITER_FAST = 1,		/* nodestore/fast.c */
	LOG_WRITER_EFIND = 2,		/* nodestore/efind.c */
	LOG_WRITER_JOURNAL = 3,		/* the write-through store's journal, nodestore/writethrough.c */
	LOG_WRITER_FORTREE = 4		/* the FOR-tree's buffer, nodestore/fortree_buffer.c:
								 * FAST's payloads */
} LogWriter;

/* LOG_PAGE's flags */
#define LOG_PAGE_FREE			0x01	/* the image is a free-list page */

typedef struct LogRecordHeader
{
	uint32		magic;
	uint32		length;
	uint64		lsn;
	uint32		crc;
	uint8		type;
	uint8		flags;
	uint16		level;
	uint64		page;
	uint32		count;
	uint32		reserved;
} LogRecordHeader;

#define FEST_LOG_RECORD_HEADER_SIZE 40
StaticAssertDecl(sizeof(LogRecordHeader) == FEST_LOG_RECORD_HEADER_SIZE,
				 "LogRecordHeader must be 40 bytes");

/* A record as replay hands it to the store. */
typedef struct LogRecord
{
	LogRecordHeader hdr;
	const char *payload;		/* hdr.length - header bytes */
	uint32		payload_len;
} LogRecord;

/* When the log is synced (festival.log_sync). */
typedef enum LogSyncMode
{
	LOG_SYNC_OPERATION,			/* at every commit: nothing acknowledged is lost */
	LOG_SYNC_TIMER,				/* at a commit when the last sync is older than
								 * festival.log_sync_interval */
	LOG_SYNC_NEVER				/* only when the index is flushed or closed */
} LogSyncMode;

typedef struct FestLog FestLog;

/* What a replay found. */
typedef struct LogReplayResult
{
	uint64		records;		/* records applied */
	uint64		groups;			/* complete modifications applied */
	uint64		dropped_bytes;	/* torn or uncommitted tail removed */
} LogReplayResult;

typedef void (*LogApplyFn) (void *arg, const LogRecord *record);

extern FestLog *log_open(const char *path, uint64 index_uid, LogWriter writer,
						 bool create, const char *index_name, FestStats *stats);
extern void log_append(FestLog *log, LogRecordType type, PageId page,
					   uint16 level, uint32 count, uint8 flags,
					   const void *payload, uint32 len);
extern void log_commit(FestLog *log, LogSyncMode mode, int sync_interval_ms);
extern void log_sync(FestLog *log);
extern uint64 log_size(FestLog *log);
extern bool log_is_empty(FestLog *log);
extern void log_truncate(FestLog *log);
extern void log_replay(FestLog *log, LogApplyFn apply, void *arg,
					   LogReplayResult *result);
extern void log_rewrite_begin(FestLog *log);
extern void log_rewrite_end(FestLog *log);
extern void log_close(FestLog *log);
/*
 * A fault hook (testing): called before each write (sync false) or sync of
 * the log file; returns 0 to go on or the errno to fail with, and sets
 * *torn when only the first half of a write should land first.
 */
typedef int (*LogFaultHook) (void *arg, bool sync, bool *torn);
extern void log_set_fault_hook(FestLog *log, LogFaultHook hook, void *arg);
extern char *log_path_for(const char *index_path);
extern uint32 log_payload_version(LogWriter writer);

#endif							/* FEST_LOG_H */
