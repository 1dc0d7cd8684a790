/*-------------------------------------------------------------------------
 *
 * meta.c
 *	  Reading and writing the alternating meta pages.
 *
 * IDENTIFICATION
 *	  src/format/meta.c
 *
 *-------------------------------------------------------------------------
 */
#include "format/meta.h"

#include "format/page.h"

/* Seal the meta data as generation gen of its slot into page. */
static void
meta_encode(char *page, uint32 page_size, const FestMeta *meta, uint64 gen,
			size_t config_len)
{
	FestMetaDisk *disk = (FestMetaDisk *) FestPageGetBody(page);
	PageId		slot = gen % FEST_META_PAGES;

	fest_page_init(page, page_size, slot, FEST_PAGE_META);
	memcpy(disk->magic, FEST_META_MAGIC, sizeof(disk->magic));
	disk->format_version = FEST_META_VERSION;
	disk->page_size = page_size;
	disk->generation = gen;
	disk->index_uid = meta->index_uid;
	strncpy(disk->structure, meta->structure, FEST_STRUCTURE_NAMELEN);
	disk->root = meta->root;
	disk->height = meta->height;
	disk->flags = meta->flags;
	disk->srid = meta->srid;
	disk->config_len = (uint32) config_len;
	disk->page_count = meta->page_count;
	disk->free_head = meta->free_head;
	disk->free_count = meta->free_count;
	disk->entry_count = meta->entry_count;
	disk->owner_database_uid = meta->owner.database_uid;
	disk->created_at = meta->created_at;
	memcpy(disk->structure_state, meta->structure_state,
		   FEST_STRUCTURE_STATE_SIZE);
	disk->owner_system_id = meta->owner.system_id;
	disk->owner_database_oid = meta->owner.database_oid;
	disk->reserved = 0;
	if (config_len > 0)
		memcpy((char *) disk + sizeof(FestMetaDisk), meta->config, config_len);
	fest_page_seal(page, page_size);
}

/*
 * Write the meta data as a pair of generations, one into each slot: first
 * the slot the next generation goes to, then the other one (meta.h says
 * why a single damaged copy then never hides the latest state).  Both
 * slots then hold the current state, which also repairs a copy found
 * damaged at open.  The caller syncs when durability is needed; the state
 * counts as written only once both writes are done.
 */
void
fest_meta_write(PageIO *io, FestMeta *meta)
{
	uint32		page_size = io->page_size;
	char	   *page = pageio_alloc_buffer(page_size);
	size_t		config_len = meta->config ? strlen(meta->config) : 0;

	if (config_len > FEST_META_CONFIG_MAX(page_size))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index configuration needs %zu bytes but a %u-byte meta page holds %zu",
						config_len, page_size,
						(size_t) FEST_META_CONFIG_MAX(page_size)),
				 errhint("Use a larger page_size.")));

	for (int i = 0; i < FEST_META_PAGES; i++)
	{
		meta->generation++;
		meta_encode(page, page_size, meta, meta->generation, config_len);
		pageio_write_one(io, meta->generation % FEST_META_PAGES, page);
		io->stats->meta_writes++;
	}
	meta->damaged_slot = -1;
	meta->damaged_reason = NULL;
	pageio_free_buffer(page);
}

/* Why meta_decode refuses a copy of an older meta format. */
static const char *const meta_old_version_reason = "meta format version older than this festival reads";

/*
 * Decode one meta copy.  Returns false, with a reason, when the copy cannot
 * be trusted.
 */
static bool
meta_decode(const char *page, uint32 page_size, PageId slot, FestMeta *meta,
			const char **reason)
{
	const FestMetaDisk *disk = (const FestMetaDisk *) FestPageGetBody(page);
	FestPageCheck check = fest_page_verify(page, page_size, slot, FEST_PAGE_META);
	size_t		record_size;

	if (check != FEST_PAGE_OK)
	{
		*reason = fest_page_check_message(check);
		return false;
	}
	if (memcmp(disk->magic, FEST_META_MAGIC, sizeof(disk->magic)) != 0)
	{
		*reason = "meta page magic mismatch";
		return false;
	}
	if (disk->format_version < FEST_META_VERSION_NO_OWNER)
	{
		*reason = meta_old_version_reason;
		return false;
	}
	if (disk->format_version > FEST_META_VERSION)
	{
		*reason = "unknown meta format version";
		return false;
	}
	/* version 2: no owner, the configuration at the owner's place */
	record_size = disk->format_version == FEST_META_VERSION_NO_OWNER ?
		offsetof(FestMetaDisk, owner_system_id) : sizeof(FestMetaDisk);
	if (disk->page_size != page_size)
	{
		*reason = "meta page records another page size";
		return false;
	}
	if (disk->config_len > page_size - FEST_PAGE_HEADER_SIZE - record_size)
	{
		*reason = "meta page configuration length out of range";
		return false;
	}
	if (disk->generation % FEST_META_PAGES != slot)
	{
		*reason = "meta page generation does not match its slot";
		return false;
	}

	meta->generation = disk->generation;
	meta->index_uid = disk->index_uid;
	memcpy(meta->structure, disk->structure, FEST_STRUCTURE_NAMELEN);
	meta->structure[FEST_STRUCTURE_NAMELEN] = '\0';
	meta->page_size = disk->page_size;
	meta->root = disk->root;
	meta->height = disk->height;
	meta->flags = disk->flags;
	meta->srid = disk->srid;
	meta->page_count = disk->page_count;
	meta->free_head = disk->free_head;
	meta->free_count = disk->free_count;
	meta->entry_count = disk->entry_count;
	meta->created_at = disk->created_at;
	memcpy(meta->structure_state, disk->structure_state,
		   FEST_STRUCTURE_STATE_SIZE);
	memset(&meta->owner, 0, sizeof(meta->owner));
	if (disk->format_version >= FEST_META_VERSION)
	{
		meta->owner.system_id = disk->owner_system_id;
		meta->owner.database_uid = disk->owner_database_uid;
		meta->owner.database_oid = disk->owner_database_oid;
	}
	meta->config = pnstrdup((const char *) disk + record_size,
							disk->config_len);
	return true;
}

/*
 * Read both meta copies and keep the valid one with the highest generation.
 * If neither is valid the index is corrupted.  A damaged copy is recorded
 * in meta->damaged_slot (the caller decides whether to warn): paired
 * writes make the other copy hold the latest state, so the index is used
 * as if both were intact.
 */
void
fest_meta_read(PageIO *io, const char *index_name, FestMeta *meta)
{
	uint32		page_size = io->page_size;
	char	   *pages[FEST_META_PAGES];
	PageIORequest reqs[FEST_META_PAGES];
	FestMeta	copies[FEST_META_PAGES];
	const char *reasons[FEST_META_PAGES];
	bool		valid[FEST_META_PAGES];
	int			best = -1;

	for (int slot = 0; slot < FEST_META_PAGES; slot++)
	{
		pages[slot] = pageio_alloc_buffer(page_size);
		reqs[slot].page = slot;
		reqs[slot].buf = pages[slot];
	}
	pageio_read(io, reqs, FEST_META_PAGES);

	for (int slot = 0; slot < FEST_META_PAGES; slot++)
	{
		valid[slot] = meta_decode(pages[slot], page_size, slot, &copies[slot],
								  &reasons[slot]);
		if (valid[slot] &&
			(best < 0 || copies[slot].generation > copies[best].generation))
			best = slot;
	}

	/* an intact file of an older format: say so, rather than "damaged" */
	if (best < 0 && reasons[0] == meta_old_version_reason &&
		reasons[1] == meta_old_version_reason)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" has meta format version %u, but this festival reads only versions %d and later",
						index_name,
						((const FestMetaDisk *) FestPageGetBody(pages[0]))->format_version,
						FEST_META_VERSION_NO_OWNER),
				 errdetail("Version %d writes every meta update as a pair of copies (format/meta.h); the file \"%s\" was written by an earlier festival.",
						   FEST_META_VERSION_NO_OWNER, io->label),
				 errhint("Drop the index with festival.drop_index('%s'), create it again and rebuild it with festival.build().",
						 index_name)));
	if (best < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" has no valid meta page", index_name),
				 errdetail("Meta page 0: %s; meta page 1: %s.",
						   reasons[0], reasons[1]),
				 errhint("The file \"%s\" is damaged or is not a festival index of page size %u; drop the index and create it again.",
						 io->label, page_size)));

	*meta = copies[best];
	meta->damaged_slot = -1;
	meta->damaged_reason = NULL;
	for (int slot = 0; slot < FEST_META_PAGES; slot++)
		if (!valid[slot])
		{
			meta->damaged_slot = slot;
			meta->damaged_reason = reasons[slot];
		}
	for (int slot = 0; slot < FEST_META_PAGES; slot++)
	{
		if (slot != best && valid[slot])
			pfree(copies[slot].config);
		pageio_free_buffer(pages[slot]);
	}
}

/*
 * Warn that fest_meta_read found one copy damaged.  The other copy holds
 * the latest state (paired writes), so this is a warning, not an error.
 */
void
fest_meta_warn_damaged(const FestMeta *meta, const char *index_name)
{
	if (meta->damaged_slot < 0)
		return;
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("meta page %d of index \"%s\" is damaged: %s",
					meta->damaged_slot, index_name, meta->damaged_reason),
			 errdetail("Meta page %d, generation " UINT64_FORMAT ", is used; it holds the latest state.",
					   1 - meta->damaged_slot, meta->generation),
			 errhint("The damaged copy is rewritten at the next meta write (a change, festival.flush() or festival.close()); festival.check('%s') reports it until then.",
					 index_name)));
}

/*
 * Read both meta copies from the device and put into reasons[slot] why a
 * copy cannot be trusted, or NULL for a valid copy.  For check(), which
 * reports what is on the device now rather than what the open found.
 */
void
fest_meta_check_copies(PageIO *io, const char *reasons[FEST_META_PAGES])
{
	uint32		page_size = io->page_size;
	PageIORequest reqs[FEST_META_PAGES];

	for (int slot = 0; slot < FEST_META_PAGES; slot++)
	{
		reqs[slot].page = slot;
		reqs[slot].buf = pageio_alloc_buffer(page_size);
	}
	pageio_read(io, reqs, FEST_META_PAGES);
	for (int slot = 0; slot < FEST_META_PAGES; slot++)
	{
		FestMeta	copy;
		const char *reason = NULL;

		if (meta_decode(reqs[slot].buf, page_size, slot, &copy, &reason))
		{
			pfree(copy.config);
			reason = NULL;
		}
		reasons[slot] = reason;
		pageio_free_buffer(reqs[slot].buf);
	}
}

/*
 * The meta data of a file not opened as an index, from the first bytes
 * of the file (head, len bytes): the page size is taken from meta page 0
 * when its magic is there (a damaged page 1 is then skipped), and the
 * valid copy of the higher generation is used.  For looking at a file
 * without locking it (ownership checks of files other databases may have
 * open); false when no copy can be trusted.
 */
bool
fest_meta_peek(const char *head, size_t len, FestMeta *meta)
{
	const FestMetaDisk *disk0 = (const FestMetaDisk *) FestPageGetBody(head);
	uint32		page_size;
	bool		found = false;

	if (len < FEST_PAGE_HEADER_SIZE + sizeof(FestMetaDisk) ||
		memcmp(disk0->magic, FEST_META_MAGIC, sizeof(disk0->magic)) != 0)
		return false;
	page_size = disk0->page_size;
	if (page_size < FEST_MIN_PAGE_SIZE || page_size > FEST_MAX_PAGE_SIZE ||
		page_size % FEST_PAGE_SIZE_MULTIPLE != 0)
		return false;
	for (int slot = 0; slot < FEST_META_PAGES; slot++)
	{
		FestMeta	copy;
		const char *reason;

		if (len < (size_t) page_size * (slot + 1))
			break;
		if (!meta_decode(head + (size_t) page_size * slot, page_size, slot, &copy, &reason))
			continue;
		if (!found || copy.generation > meta->generation)
			*meta = copy;
		found = true;
	}
	if (found)
	{
		meta->damaged_slot = -1;
		meta->damaged_reason = NULL;
	}
	return found;
}

bool
fest_owner_is_set(const FestFileOwner *owner)
{
	return owner->system_id != 0 || owner->database_uid != 0 ||
		owner->database_oid != 0;
}

/*
 * Do two owners name the same database?  Its OID and random identifier
 * say; the cluster's system identifier does not, since pg_upgrade keeps a
 * database's OID and its festival tables but makes a new cluster.
 */
bool
fest_owner_same_database(const FestFileOwner *a, const FestFileOwner *b)
{
	return a->database_uid == b->database_uid && a->database_oid == b->database_oid;
}
