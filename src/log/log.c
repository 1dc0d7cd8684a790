/*-------------------------------------------------------------------------
 *
 * log.c
 *	  Appending, syncing, replaying and rewriting the redo log.
 *
 * Records of the modification in progress are collected in memory and
 * written with one pwrite at commit, followed by a sync when the mode asks
 * for one.  Replay reads the whole log (it is bounded by the log_size
 * option), checks every record, hands complete groups to the store and
 * cuts off a torn tail so that new records follow the last good one.
 * Compaction writes the store's current state into a new file that then
 * replaces the log atomically (rename, then a sync of the directory).
 *
 * IDENTIFICATION
 *	  src/log/log.c
 *
 *-------------------------------------------------------------------------
 */
#include "log/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

struct FestLog
{
	char	   *path;
	char	   *index_name;
	int			fd;
	uint64		index_uid;
	LogWriter	writer;
	uint64		next_lsn;
	uint64		file_size;		/* bytes in the file, up to its END record */
	bool		end_follows;	/* an END record follows them (log.h) */
	StringInfoData pending;		/* records not yet written */
	bool		unsynced;		/* written since the last sync */
	int64		last_sync_ns;
	FestStats  *stats;
	LogFaultHook fault_hook;	/* the index's fault layer (testing), or NULL */
	void	   *fault_arg;
	uint64		pending_lsn;	/* LSN of the first pending record */
	/* compaction in progress */
	char	   *tmp_path;
	int			tmp_fd;
	MemoryContextCallback release;	/* closes it with its memory context */
};

typedef struct LogFileHeader
{
	char		magic[8];
	uint32		version;
	uint32		header_size;
	uint64		index_uid;
	uint64		first_lsn;
	uint32		crc;
	uint32		writer;			/* LogWriter */
	uint32		writer_version; /* log_payload_version(writer) */
} LogFileHeader;

/* the header's checksummed bytes (log.h), the crc field zeroed */
#define LOG_HEADER_CRC_BYTES	44
StaticAssertDecl(offsetof(LogFileHeader, writer_version) + sizeof(uint32) ==
				 LOG_HEADER_CRC_BYTES,
				 "LogFileHeader's layout is documented in log.h");

static uint32 crc_of(const void *data, size_t len);
static uint32 valid_record(const char *data, uint64 size, uint64 offset,
						   uint64 expected_lsn);

/* The checksum of a header block: its first 44 bytes, crc taken as zero. */
static uint32
header_crc(const char *block)
{
	char		copy[LOG_HEADER_CRC_BYTES];

	memcpy(copy, block, sizeof(copy));
	memset(copy + offsetof(LogFileHeader, crc), 0, sizeof(uint32));
	return crc_of(copy, sizeof(copy));
}

static uint32
crc_of(const void *data, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

char *
log_path_for(const char *index_path)
{
	return psprintf("%s.log", index_path);
}

static void
write_all(FestLog *log, int fd, const char *data, size_t len, off_t offset,
		  const char *path)
{
	size_t		done = 0;
	bool		torn;
	int			err = log->fault_hook ? log->fault_hook(log->fault_arg, false, &torn) : 0;

	if (err != 0)
	{
		/* an injected fault: a torn write lands its first half first */
		if (torn && pwrite(fd, data, len / 2, offset) < 0)
			err = errno;
		errno = err;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write log file \"%s\": %m", path),
				 errdetail("The fault was injected by festival.inject_fault().")));
	}

	while (done < len)
	{
		ssize_t		put = pwrite(fd, data + done, len - done, offset + done);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
		{
			if (put == 0)
				errno = ENOSPC;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write log file \"%s\": %m", path)));
		}
		done += put;
	}
}

static void
sync_fd(FestLog *log, int fd, const char *path)
{
	bool		torn;
	int			err = log->fault_hook ? log->fault_hook(log->fault_arg, true, &torn) : 0;
	int64		start_cpu;

	if (err != 0)
	{
		errno = err;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not sync log file \"%s\": %m", path),
				 errdetail("The fault was injected by festival.inject_fault().")));
	}
	/* the host's CPU time, left out of the index's as file_sync does */
	start_cpu = fest_cpu_ns();
	if (fdatasync(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not sync log file \"%s\": %m", path)));
	log->stats->sync_cpu_ns += fest_cpu_ns() - start_cpu;
}

/*
 * The payload format a writer writes: FAST's, which the FOR-tree's buffer
 * shares, is 2 (its MOD items INSERT and DELETE, nodestore/fast.c); the
 * others' 1.
 */
uint32
log_payload_version(LogWriter writer)
{
	return (writer == LOG_WRITER_FAST || writer == LOG_WRITER_FORTREE) ? 2 : 1;
}

/* Write a fresh header at the start of fd. */
static void
write_header(FestLog *log, int fd, const char *path, uint64 index_uid, uint64 first_lsn)
{
	char		block[FEST_LOG_HEADER_SIZE];
	LogFileHeader *hdr = (LogFileHeader *) block;

	memset(block, 0, sizeof(block));
	memcpy(hdr->magic, FEST_LOG_MAGIC, sizeof(FEST_LOG_MAGIC));
	hdr->version = FEST_LOG_VERSION;
	hdr->header_size = FEST_LOG_HEADER_SIZE;
	hdr->index_uid = index_uid;
	hdr->first_lsn = first_lsn;
	hdr->writer = (uint32) log->writer;
	hdr->writer_version = log_payload_version(log->writer);
	hdr->crc = header_crc(block);
	write_all(log, fd, block, sizeof(block), 0, path);
}

static int
open_fd(const char *path, int flags)
{
	int			fd;

	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("too many open index files"),
				 errhint("Close indices with festival.close() or raise max_files_per_process.")));
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, S_IRUSR | S_IWUSR);
	if (fd < 0)
	{
		int			save_errno = errno;

		ReleaseExternalFD();
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open log file \"%s\": %m", path)));
	}
	return fd;
}

static void
corrupt(FestLog *log, uint64 offset, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("log of index \"%s\" is corrupted at byte " UINT64_FORMAT,
					log->index_name, offset),
			 errdetail("%s", detail),
			 errhint("The changes the log holds cannot be recovered; rebuild the index with festival.build('%s').",
					 log->index_name)));
}

/*
 * The log's descriptors belong to the memory context it lives in (an open
 * index's): when that context goes before log_close (log_open's own errors
 * after the file was opened, an open of the index that failed later, in
 * the replay say), they are released with it.
 */
static void
log_release_callback(void *arg)
{
	log_close((FestLog *) arg);
}

/*
 * Open the log of an index (creating it, with create).  The header must
 * name the same index; records are checked by log_replay.  The log lives
 * in the current memory context and is closed with it at the latest.
 */
FestLog *
log_open(const char *path, uint64 index_uid, LogWriter writer, bool create,
		 const char *index_name, FestStats *stats)
{
	FestLog    *log = palloc0(sizeof(FestLog));
	struct stat st;

	log->path = pstrdup(path);
	log->index_name = pstrdup(index_name);
	log->index_uid = index_uid;
	log->writer = writer;
	log->stats = stats;
	log->fd = -1;
	log->tmp_fd = -1;
	log->next_lsn = 1;
	initStringInfo(&log->pending);
	log->release.func = log_release_callback;
	log->release.arg = log;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &log->release);

	if (create)
	{
		/* a log left by an index of the same name that no longer exists */
		if (unlink(path) != 0 && errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not remove old log file \"%s\": %m", path)));
		log->fd = open_fd(path, O_RDWR | O_CREAT | O_EXCL);
		write_header(log, log->fd, path, index_uid, log->next_lsn);
		sync_fd(log, log->fd, path);
		log->file_size = FEST_LOG_HEADER_SIZE;
		return log;
	}

	log->fd = open_fd(path, O_RDWR);
	if (fstat(log->fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat log file \"%s\": %m", path)));
	log->file_size = st.st_size;
	if (log->file_size < FEST_LOG_HEADER_SIZE)
		corrupt(log, 0, "The file is shorter than its header.");
	{
		char		block[FEST_LOG_HEADER_SIZE];
		LogFileHeader *hdr = (LogFileHeader *) block;

		if (pread(log->fd, block, sizeof(block), 0) != sizeof(block))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read log file \"%s\": %m", path)));
		if (memcmp(hdr->magic, FEST_LOG_MAGIC, sizeof(FEST_LOG_MAGIC)) != 0)
			corrupt(log, 0, "The log header is damaged.");
		if (hdr->version != FEST_LOG_VERSION)
			corrupt(log, 0, psprintf("The log has format version %u; this festival reads version %d.",
									 hdr->version, FEST_LOG_VERSION));
		if (hdr->crc != header_crc(block))
			corrupt(log, 0, "The log header is damaged.");
		if (hdr->writer != (uint32) writer || hdr->writer_version < LOG_PAYLOAD_VERSION_FIRST ||
			hdr->writer_version > log_payload_version(writer))
			corrupt(log, 0, log_payload_version(writer) == LOG_PAYLOAD_VERSION_FIRST
					? psprintf("The log holds payloads of writer %u, format %u; this index's store writes those of writer %d, format %d.",
							   hdr->writer, hdr->writer_version,
							   (int) writer, LOG_PAYLOAD_VERSION_FIRST)
					: psprintf("The log holds payloads of writer %u, format %u; this index's store writes those of writer %d, format %u, and reads formats %d to %u.",
							   hdr->writer, hdr->writer_version,
							   (int) writer, log_payload_version(writer),
							   LOG_PAYLOAD_VERSION_FIRST, log_payload_version(writer)));
		if (hdr->index_uid != index_uid)
			corrupt(log, 0, "The log belongs to another index.");
		log->next_lsn = hdr->first_lsn;
		/*
		 * An older format of this writer is a subset of its current one:
		 * its records replay as they are, and the records appended from now
		 * on may use what is new, so the header says the current format
		 * before anything is appended (a festival that knows only the old
		 * format then refuses the log instead of misreading it).
		 */
		if (hdr->writer_version < log_payload_version(writer))
		{
			write_header(log, log->fd, path, index_uid, hdr->first_lsn);
			sync_fd(log, log->fd, path);
		}
	}
	/* the logical end: before the END record the last write left */
	if (log->file_size >= FEST_LOG_HEADER_SIZE + FEST_LOG_RECORD_HEADER_SIZE)
	{
		char		tail[FEST_LOG_RECORD_HEADER_SIZE];

		if (pread(log->fd, tail, sizeof(tail), log->file_size - sizeof(tail)) != sizeof(tail))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read log file \"%s\": %m", path)));
		if (valid_record(tail, sizeof(tail), 0, 0) == sizeof(tail) &&
			((LogRecordHeader *) tail)->type == LOG_END)
		{
			log->file_size -= sizeof(tail);
			log->end_follows = true;
		}
	}
	return log;
}

/* Add a record to the modification in progress. */
void
log_append(FestLog *log, LogRecordType type, PageId page, uint16 level,
		   uint32 count, uint8 flags, const void *payload, uint32 len)
{
	LogRecordHeader hdr;
	uint32		total = FEST_LOG_RECORD_HEADER_SIZE + len;
	uint32		padded = TYPEALIGN(FEST_LOG_ALIGN, total);
	pg_crc32c	crc;
	static const char zeros[FEST_LOG_ALIGN] = {0};

	if (log->pending.len == 0)
		log->pending_lsn = log->next_lsn;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = FEST_LOG_RECORD_MAGIC;
	hdr.length = total;
	hdr.lsn = log->next_lsn++;
	hdr.type = (uint8) type;
	hdr.flags = flags;
	hdr.level = level;
	hdr.page = page;
	hdr.count = count;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &hdr, sizeof(hdr));
	if (len > 0)
		COMP_CRC32C(crc, payload, len);
	FIN_CRC32C(crc);
	hdr.crc = (uint32) crc;

	appendBinaryStringInfo(&log->pending, (const char *) &hdr, sizeof(hdr));
	if (len > 0)
		appendBinaryStringInfo(&log->pending, payload, len);
	if (padded > total)
		appendBinaryStringInfo(&log->pending, zeros, padded - total);

	log->stats->log_records++;
	log->stats->log_bytes += padded;
}

/* Log I/O is device I/O too: it counts in io_seconds as well. */
static void
log_account(FestLog *log, int64 ns)
{
	log->stats->log_write_ns += ns;
	log->stats->io_ns += ns;
}

/*
 * The END record (log.h) for a log whose next record takes sequence number
 * lsn, into buf (FEST_LOG_RECORD_HEADER_SIZE bytes).
 */
static void
make_end_record(char *buf, uint64 lsn)
{
	LogRecordHeader hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = FEST_LOG_RECORD_MAGIC;
	hdr.length = FEST_LOG_RECORD_HEADER_SIZE;
	hdr.lsn = lsn;
	hdr.type = (uint8) LOG_END;
	hdr.page = InvalidPageId;
	hdr.crc = crc_of(&hdr, sizeof(hdr));
	memcpy(buf, &hdr, sizeof(hdr));
}

/*
 * Write the pending records to whichever file is current, followed by an
 * END record in the same write; the file's logical size (file_size) ends
 * before the END, which the next write overwrites.
 */
static void
write_pending(FestLog *log)
{
	int			fd = log->tmp_fd >= 0 ? log->tmp_fd : log->fd;
	const char *path = log->tmp_fd >= 0 ? log->tmp_path : log->path;
	int64		start;
	int			records_len = log->pending.len;
	char		end[FEST_LOG_RECORD_HEADER_SIZE];

	if (log->pending.len == 0)
		return;
	StaticAssertStmt(FEST_LOG_RECORD_HEADER_SIZE % FEST_LOG_ALIGN == 0,
					 "an END record keeps the alignment of what follows");
	make_end_record(end, log->next_lsn);
	appendBinaryStringInfo(&log->pending, end, sizeof(end));
	start = fest_now_ns();
	PG_TRY();
	{
		write_all(log, fd, log->pending.data, log->pending.len, log->file_size,
				  path);
	}
	PG_CATCH();
	{
		/*
		 * Part of the records may have landed.  Cut the file back to the end
		 * of the last complete group and forget the records (their
		 * modification fails), so that later appends follow readable records
		 * with consecutive LSNs: a replay stops at the first torn or
		 * out-of-sequence record and would drop everything after it.
		 */
		if (ftruncate(fd, (off_t) log->file_size) != 0)
		{
			/* keep the write's error; a replay drops a torn tail anyway */
		}
		log->end_follows = false;
		log->next_lsn = log->pending_lsn;
		resetStringInfo(&log->pending);
		PG_RE_THROW();
	}
	PG_END_TRY();
	log_account(log, fest_now_ns() - start);
	log->file_size += records_len;
	log->end_follows = true;
	resetStringInfo(&log->pending);
	log->unsynced = true;
}

/*
 * Route the log's writes and syncs through the index's fault layer (set
 * up by the node store, which sees both), so festival.inject_fault can fail
 * them (targets log_write, log_sync).
 */
void
log_set_fault_hook(FestLog *log, LogFaultHook hook, void *arg)
{
	log->fault_hook = hook;
	log->fault_arg = arg;
}

void
log_sync(FestLog *log)
{
	int64		start;

	write_pending(log);
	if (!log->unsynced)
		return;
	start = fest_now_ns();
	sync_fd(log, log->fd, log->path);
	log_account(log, fest_now_ns() - start);
	log->stats->log_syncs++;
	log->unsynced = false;
	log->last_sync_ns = fest_now_ns();
}

/*
 * Close the group of the modification in progress, write it, and sync as
 * the mode says.  Once this returns with LOG_SYNC_OPERATION, the
 * modification survives any crash.
 */
void
log_commit(FestLog *log, LogSyncMode mode, int sync_interval_ms)
{
	uint64		group_start = log->file_size;
	uint64		group_lsn;

	log_append(log, LOG_COMMIT, InvalidPageId, 0, 0, 0, NULL, 0);
	group_lsn = log->pending_lsn;
	write_pending(log);
	PG_TRY();
	{
		if (mode == LOG_SYNC_OPERATION ||
			(mode == LOG_SYNC_TIMER &&
			 fest_now_ns() - log->last_sync_ns >= (int64) sync_interval_ms * 1000000))
			log_sync(log);
	}
	PG_CATCH();
	{
		/*
		 * The group is written but not known to be durable, and its
		 * modification fails: cut it off, so that a replay does not apply
		 * a change that was never acknowledged.
		 */
		if (log->tmp_fd < 0 && ftruncate(log->fd, (off_t) group_start) == 0)
		{
			log->file_size = group_start;
			log->end_follows = false;
			log->next_lsn = group_lsn;
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
}

uint64
log_size(FestLog *log)
{
	return log->file_size + log->pending.len;
}

bool
log_is_empty(FestLog *log)
{
	return log_size(log) <= FEST_LOG_HEADER_SIZE;
}

/* Drop every record (after everything they describe was written). */
void
log_truncate(FestLog *log)
{
	resetStringInfo(&log->pending);
	if (ftruncate(log->fd, FEST_LOG_HEADER_SIZE) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not truncate log file \"%s\": %m", log->path)));
	write_header(log, log->fd, log->path, log->index_uid, log->next_lsn);
	log->file_size = FEST_LOG_HEADER_SIZE;
	log->end_follows = false;
	log->unsynced = true;
	log_sync(log);
}

/*
 * Check the record at offset; returns its padded length, or 0 if it is
 * not a valid record.  expected_lsn 0 accepts any sequence number.
 */
static uint32
valid_record(const char *data, uint64 size, uint64 offset, uint64 expected_lsn)
{
	LogRecordHeader hdr;
	pg_crc32c	crc;
	uint32		stored;

	if (size - offset < FEST_LOG_RECORD_HEADER_SIZE)
		return 0;
	memcpy(&hdr, data + offset, sizeof(hdr));
	if (hdr.magic != FEST_LOG_RECORD_MAGIC ||
		hdr.length < FEST_LOG_RECORD_HEADER_SIZE ||
		hdr.length > size - offset)
		return 0;
	if (expected_lsn != 0 && hdr.lsn != expected_lsn)
		return 0;
	stored = hdr.crc;
	hdr.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &hdr, sizeof(hdr));
	if (hdr.length > FEST_LOG_RECORD_HEADER_SIZE)
		COMP_CRC32C(crc, data + offset + FEST_LOG_RECORD_HEADER_SIZE,
					hdr.length - FEST_LOG_RECORD_HEADER_SIZE);
	FIN_CRC32C(crc);
	if ((uint32) crc != stored)
		return 0;
	return TYPEALIGN(FEST_LOG_ALIGN, hdr.length);
}

/*
 * Replay the log: every complete group, in order, goes to apply, up to
 * the END record.  A torn or uncommitted tail is cut off and an END written
 * where the log then ends; damage followed by a valid record (an END
 * included) is an error.
 */
void
log_replay(FestLog *log, LogApplyFn apply, void *arg, LogReplayResult *result)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "festival log replay",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	uint64		size = log->file_size +
		(log->end_follows ? FEST_LOG_RECORD_HEADER_SIZE : 0);
	char	   *data = palloc(size);
	uint64		offset = FEST_LOG_HEADER_SIZE;
	uint64		group_start = offset;
	uint64		expected_lsn = log->next_lsn;
	bool		found_end = false;
	int			ngroup = 0;
	int			maxgroup = 64;
	LogRecord  *group = palloc(maxgroup * sizeof(LogRecord));

	memset(result, 0, sizeof(*result));
	if (size > FEST_LOG_HEADER_SIZE)
	{
		size_t		done = 0;

		while (done < size)
		{
			ssize_t		got = pread(log->fd, data + done, size - done, done);

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read log file \"%s\": %m", log->path)));
			done += got;
		}
	}

	while (offset < size)
	{
		uint32		len = valid_record(data, size, offset, expected_lsn);
		LogRecord  *rec;

		if (len > 0 && ((LogRecordHeader *) (data + offset))->type == LOG_END)
		{
			found_end = true;
			break;
		}
		if (len == 0)
		{
			/* a valid record further on means damage in the middle */
			for (uint64 probe = offset + FEST_LOG_ALIGN; probe < size; probe += FEST_LOG_ALIGN)
				if (valid_record(data, size, probe, 0) > 0)
					corrupt(log, offset,
							psprintf("A damaged record at byte " UINT64_FORMAT " is followed by valid records at byte " UINT64_FORMAT ".",
									 offset, probe));
			break;				/* a torn tail */
		}

		if (ngroup == maxgroup)
		{
			maxgroup *= 2;
			group = repalloc(group, maxgroup * sizeof(LogRecord));
		}
		rec = &group[ngroup++];
		memcpy(&rec->hdr, data + offset, sizeof(LogRecordHeader));
		rec->payload = data + offset + FEST_LOG_RECORD_HEADER_SIZE;
		rec->payload_len = rec->hdr.length - FEST_LOG_RECORD_HEADER_SIZE;
		offset += len;
		expected_lsn = rec->hdr.lsn + 1;

		if (rec->hdr.type == LOG_COMMIT)
		{
			MemoryContextSwitchTo(old);
			for (int i = 0; i < ngroup - 1; i++)
				apply(arg, &group[i]);
			MemoryContextSwitchTo(cxt);
			result->records += ngroup - 1;
			result->groups++;
			ngroup = 0;
			group_start = offset;
			log->next_lsn = expected_lsn;
		}
	}

	/*
	 * The log ends at an END right after its last complete group: it stays
	 * (the next write overwrites it).  Otherwise cut off what follows the
	 * last complete group (an uncommitted or torn tail) and end the log
	 * there with an END, so that damage in that group is found later too.
	 */
	if (found_end && offset == group_start)
		log->file_size = group_start;	/* end_follows stays */
	else if (group_start < size)
	{
		char		end[FEST_LOG_RECORD_HEADER_SIZE];

		result->dropped_bytes = size - group_start;
		if (ftruncate(log->fd, group_start) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not truncate log file \"%s\": %m", log->path)));
		log->file_size = group_start;
		log->end_follows = false;
		if (group_start > FEST_LOG_HEADER_SIZE)
		{
			make_end_record(end, log->next_lsn);
			write_all(log, log->fd, end, sizeof(end), group_start, log->path);
			log->end_follows = true;
		}
		log->unsynced = true;
		log_sync(log);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * Start writing a new log (compaction): records appended until
 * log_rewrite_end go to a new file, which then replaces the log.
 */
void
log_rewrite_begin(FestLog *log)
{
	Assert(log->tmp_fd < 0);
	write_pending(log);
	/* in the log's context: log_close may need it after this operation */
	log->tmp_path = MemoryContextStrdup(GetMemoryChunkContext(log),
										psprintf("%s.tmp", log->path));
	if (unlink(log->tmp_path) != 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove \"%s\": %m", log->tmp_path)));
	log->tmp_fd = open_fd(log->tmp_path, O_RDWR | O_CREAT | O_EXCL);
	write_header(log, log->tmp_fd, log->tmp_path, log->index_uid, log->next_lsn);
	log->file_size = FEST_LOG_HEADER_SIZE;
	log->end_follows = false;
}

static void
sync_directory_of(const char *path)
{
	char	   *dir = pstrdup(path);
	char	   *slash = strrchr(dir, '/');
	int			fd;

	if (slash == NULL)
		return;
	*slash = '\0';
	fd = open(dir, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
	{
		int			save_errno = errno;

		if (fd >= 0)
			close(fd);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not sync directory \"%s\": %m", dir)));
	}
	close(fd);
}

void
log_rewrite_end(FestLog *log)
{
	log_append(log, LOG_COMMIT, InvalidPageId, 0, 0, 0, NULL, 0);
	write_pending(log);
	sync_fd(log, log->tmp_fd, log->tmp_path);
	if (rename(log->tmp_path, log->path) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rename \"%s\" to \"%s\": %m", log->tmp_path, log->path)));
	sync_directory_of(log->path);

	close(log->fd);
	ReleaseExternalFD();
	log->fd = log->tmp_fd;
	log->tmp_fd = -1;
	pfree(log->tmp_path);
	log->tmp_path = NULL;
	log->unsynced = false;
	log->last_sync_ns = fest_now_ns();
	log->stats->log_compactions++;
}

/* Release descriptors; never raises an error. */
void
log_close(FestLog *log)
{
	if (log->tmp_fd >= 0)
	{
		close(log->tmp_fd);
		ReleaseExternalFD();
		unlink(log->tmp_path);
		log->tmp_fd = -1;
	}
	if (log->fd >= 0)
	{
		close(log->fd);
		ReleaseExternalFD();
		log->fd = -1;
	}
}
