/*-------------------------------------------------------------------------
 *
 * tier_map.c
 *	  The durable page -> tier map of a tiered index: a side file next to
 *	  the index file ("<index file>.tiermap").
 *
 * Layout (little-endian, as the page format):
 *	offset size field
 *	     0    4 magic		0x50524954 ("TIRP")
 *	     4    2 version		TIERMAP_VERSION
 *	     6    2 flags		TIERMAP_OPEN: written while the index was in use;
 *							0: at a flush with nothing in flight (tier.h)
 *	     8    8 npages		entries that follow the header
 *	    16    4 nreleased	page ids of the release list
 *	    20    4 crc			CRC32C of every byte after the header
 *	    24    npages bytes	one per page: bit 0 the tier (1 = fast), bits
 *							1..6 the node level + 1 (0 = not a node page),
 *							bit 7 set once the page was written
 *	    ...   8 * nreleased	pages migrated since the previous map: their
 *							source copy (the tier the map does not name)
 *							is zeroed after this map is durable, and again
 *							at the next open (idempotent)
 *
 * The file is replaced atomically (written to "<path>.tmp", fsynced and
 * renamed with durable_rename), so a crash leaves the old map or the new
 * one, never a mixture.  Every read verifies magic, version, size and CRC;
 * a damaged map is ERRCODE_DATA_CORRUPTED naming the index.
 *
 * IDENTIFICATION
 *	  src/tier/tier_map.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port/pg_crc32c.h"
#include "storage/fd.h"

#define TIERMAP_MAGIC	0x50524954
#define TIERMAP_VERSION 1
#define TIERMAP_HEADER	24

typedef struct TierMapHeader
{
	uint32		magic;
	uint16		version;
	uint16		flags;
	uint64		npages;
	uint32		nreleased;
	uint32		crc;
} TierMapHeader;

StaticAssertDecl(sizeof(TierMapHeader) == TIERMAP_HEADER,
				 "TierMapHeader must be 24 bytes");

/*
 * A file the index writes itself, replaced atomically (the map, the
 * weights: tier_weights.c): the parts are
 * written to "<path>.tmp", which is fsynced and renamed over path with
 * durable_rename, so a crash leaves the old file or the new one.  The fault
 * layer's target (festival.inject_fault) is checked half-way through the
 * bytes: an error or a crash there leaves half a temporary file and the
 * file in place untouched.  what names the file in messages; hint is the
 * error hint for a failed write.
 */
static void
replace_fail(int fd, int err, const char *fmt_what, const char *what,
			 const char *path, const char *hint)
{
	close(fd);
	errno = err;
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not %s %s \"%s\": %m", fmt_what, what, path),
			 errhint("%s", hint)));
}

static void
write_all(int fd, const char *path, const char *what, const char *hint,
		  const char *p, size_t len)
{
	while (len > 0)
	{
		ssize_t		done = write(fd, p, len);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			replace_fail(fd, done < 0 ? errno : ENOSPC, "write", what, path, hint);
		p += done;
		len -= done;
	}
}

void
tier_file_replace(const char *path, const char *what, const char *hint,
				  const TierFilePart *parts, int nparts, FaultState *fs,
				  FaultTarget target)
{
	char	   *tmp = psprintf("%s.tmp", path);
	size_t		total = 0;
	size_t		half;
	size_t		written = 0;
	bool		checked = false;
	int			fd;

	for (int i = 0; i < nparts; i++)
		total += parts[i].len;
	half = total / 2;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, S_IRUSR | S_IWUSR);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create %s \"%s\": %m", what, tmp),
				 errhint("Check the space and permissions of the index's device directory.")));
	for (int i = 0; i < nparts; i++)
	{
		const char *p = parts[i].data;
		size_t		len = parts[i].len;

		/* the part that holds the half-way point is written in two pieces */
		if (!checked && written + len >= half)
		{
			size_t		first = half - written;
			bool		torn;
			int			err;

			write_all(fd, tmp, what, hint, p, first);
			/* a crash fault dies here, leaving half a temporary file */
			err = fault_check_file(fs, target, &torn);
			if (err != 0)
				replace_fail(fd, err, "write", what, tmp, hint);
			checked = true;
			p += first;
			len -= first;
			written += first;
		}
		write_all(fd, tmp, what, hint, p, len);
		written += len;
	}
	Assert(checked && written == total);
	if (pg_fsync(fd) != 0)
		replace_fail(fd, errno, "fsync", what, tmp, "Check the index's device.");
	close(fd);
	/* the rename is the commit point: old file or new, never a mixture */
	(void) durable_rename(tmp, path, ERROR);
	pfree(tmp);
}

/*
 * Replace the map at path, durably and atomically.  The fault layer's
 * "tier_map_write" target fails or kills the write half-way through the
 * temporary file: the map in place survives.
 */
void
tiermap_write(const char *path, uint16 flags, const uint8 *entries, uint64 n,
			  const PageId *released, int nreleased, FaultState *fs)
{
	TierMapHeader h;
	pg_crc32c	crc;
	TierFilePart parts[3];

	memset(&h, 0, sizeof(h));
	h.magic = TIERMAP_MAGIC;
	h.version = TIERMAP_VERSION;
	h.flags = flags;
	h.npages = n;
	h.nreleased = (uint32) nreleased;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, entries, n);
	COMP_CRC32C(crc, released, sizeof(PageId) * nreleased);
	FIN_CRC32C(crc);
	h.crc = crc;

	parts[0] = (TierFilePart) {&h, sizeof(h)};
	parts[1] = (TierFilePart) {entries, n};
	parts[2] = (TierFilePart) {released, sizeof(PageId) * nreleased};
	tier_file_replace(path, "tier map",
				 "Check the space and permissions of the index's device directory; the map written before stays in place.",
				 parts, lengthof(parts), fs, FAULT_TIER_MAP_WRITE);
}

static void
damaged(const char *path, const char *index_name, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("tier map \"%s\" of index \"%s\" is damaged: %s",
					path, index_name, what),
			 errhint("The map says which device holds each page and cannot be guessed safely; restore the file, or drop the index with festival.drop_index('%s') and build it again.",
					 index_name)));
}

/*
 * Read and verify the map at path; entries and the release list are
 * allocated in cxt.
 */
uint8 *
tiermap_read(const char *path, const char *index_name, uint16 *flags,
			 uint64 *n, PageId **released, int *nreleased, MemoryContext cxt)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	struct stat st;
	TierMapHeader h;
	char	   *body;
	size_t		body_len;
	pg_crc32c	crc;
	uint8	   *entries;

	if (fd < 0)
	{
		if (errno == ENOENT)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FILE),
					 errmsg("tier map \"%s\" of index \"%s\" is missing", path, index_name),
					 errhint("The map says which device holds each page; restore the file, or drop the index with festival.drop_index('%s') and build it again.",
							 index_name)));
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open tier map \"%s\": %m", path),
				 errhint("Check the permissions of the index's device directory.")));
	}
	if (fstat(fd, &st) != 0 || st.st_size < TIERMAP_HEADER ||
		read(fd, &h, sizeof(h)) != sizeof(h))
	{
		close(fd);
		damaged(path, index_name, "shorter than its header");
	}
	if (h.magic != TIERMAP_MAGIC)
	{
		close(fd);
		damaged(path, index_name, "bad magic number");
	}
	if (h.version != TIERMAP_VERSION)
	{
		close(fd);
		damaged(path, index_name, "unknown version");
	}
	body_len = (size_t) st.st_size - TIERMAP_HEADER;
	if (h.npages > body_len ||
		body_len != h.npages + sizeof(PageId) * (uint64) h.nreleased)
	{
		close(fd);
		damaged(path, index_name, "its size does not match its header");
	}
	body = MemoryContextAllocHuge(cxt, body_len + 1);
	if (read(fd, body, body_len) != (ssize_t) body_len)
	{
		close(fd);
		damaged(path, index_name, "short read");
	}
	close(fd);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, body, body_len);
	FIN_CRC32C(crc);
	if (crc != h.crc)
		damaged(path, index_name, "checksum mismatch");

	entries = MemoryContextAllocHuge(cxt, Max(h.npages, 1));
	memcpy(entries, body, h.npages);
	*flags = h.flags;
	*n = h.npages;
	*nreleased = (int) h.nreleased;
	*released = MemoryContextAlloc(cxt, sizeof(PageId) * Max(h.nreleased, 1));
	memcpy(*released, body + h.npages, sizeof(PageId) * h.nreleased);
	pfree(body);
	return entries;
}
