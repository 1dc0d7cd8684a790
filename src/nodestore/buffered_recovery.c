/*-------------------------------------------------------------------------
 *
 * buffered_recovery.c
 *	  Restart of a buffering store (FAST, eFIND): the redo log replayed into
 *	  the write buffer when the index was not closed cleanly (Carniel et al.
 *	  2019's restart, IS algorithm 7 in reverse: the buffer's state rebuilt
 *	  from the log's complete groups).
 *
 * Replay applies complete groups only (log/log.h); a page's earlier records
 * are dropped at LOG_FLUSH, and at LOG_FLUSH_BEGIN when the stored image
 * carries the checksum logged for it (the flush wrote it), so no record is
 * applied twice to a page that already holds it.  A replayed page whose
 * stored image fails verification was torn by the interrupted flush: the
 * log holds only the changes since the page's last write, so the index is
 * left suspect.
 *
 * IDENTIFICATION
 *	  src/nodestore/buffered_recovery.c
 *
 *-------------------------------------------------------------------------
 */
#include "nodestore/buffered.h"

#include "device/device.h"

/*
 * Replay of LOG_FLUSH_BEGIN: a page whose stored image carries the
 * checksum logged for it was written by that flush, so the records before
 * it are in the page; drop them as LOG_FLUSH would.  A page not written
 * (crash before its write) keeps its records.  A page that fails
 * verification was torn by the flush (a crash or a failed write in the
 * middle of it): if the buffer's version of it is built on the stored one
 * (a MOD page, or one the buffer no longer holds), the log holds only the
 * changes since the page was last written, not its older entries, so the
 * index may have lost entries and is left suspect (changes refused until
 * check or build); a NEW or DEL page the log holds whole.
 */
static void
replay_flush_intent(BufferedStore *bs, const LogRecord *rec)
{
	NodeStore  *ns = &bs->ns;
	char	   *image = pageio_alloc_buffer(ns->page_size);
	uint64		npages = pageio_npages(ns->io);

	for (uint32 i = 0; i < rec->hdr.count; i++)
	{
		FlushIntentItem item;
		BufPage    *bp;

		memcpy(&item, rec->payload + i * sizeof(item), sizeof(item));
		if (item.page >= npages)
			continue;
		bp = buffered_lookup(bs, item.page);
		pageio_read_one(ns->io, item.page, image);
		if (fest_page_verify(image, ns->page_size, item.page, 0) != FEST_PAGE_OK)
		{
			/*
			 * Lost only if the buffer's version is built on the stored one
			 * (MOD): a page the log holds whole since its creation (NEW) or
			 * frees (DEL) does not need it, as when a tier's crash recovery
			 * released a copy the map did not name yet.
			 */
			if (bp == NULL || bp->status == BUF_MOD)
				bs->torn_pages++;
			continue;
		}
		if (bp != NULL && FestPageGetHeader(image)->checksum == item.checksum)
			buffered_remove_page(bs, bp);
	}
	pageio_free_buffer(image);
}

/* One replayed record; see buffered_recover. */
static void
apply_record(void *arg, const LogRecord *rec)
{
	BufferedStore *bs = (BufferedStore *) arg;
	BufPage    *bp;

	bs->ns.stats->recovery_records++;
	switch ((LogRecordType) rec->hdr.type)
	{
		case LOG_META:
			if (rec->payload_len == sizeof(LoggedMeta))
				ns_meta_from_logged((const LoggedMeta *) rec->payload, bs->ns.meta);
			break;
		case LOG_NEW:
		case LOG_MOD:
			bp = buffered_enter_page(bs, rec->hdr.page, rec->hdr.level);
			if (rec->hdr.type == LOG_NEW || bp->status == BUF_DEL)
			{
				bs->ops->forget(bs, bp);
				buffered_account(bs, bp, BUF_PAGE_OVERHEAD);
				buffered_set_status(bp, BUF_NEW);
			}
			bp->level = rec->hdr.level;
			bp->last_mod = ++bs->clock;
			bs->ops->replay(bs, bp, rec);
			break;
		case LOG_DEL:
			bp = buffered_enter_page(bs, rec->hdr.page, rec->hdr.level);
			bs->ops->forget(bs, bp);
			bp->status = BUF_DEL;
			bp->mod_count++;
			bp->last_mod = ++bs->clock;
			memcpy(&bp->link, rec->payload, sizeof(bp->link));
			buffered_account(bs, bp, BUF_PAGE_OVERHEAD);
			bs->ops->deleted(bs, bp);
			break;
		case LOG_FLUSH:
			for (uint32 i = 0; i < rec->hdr.count; i++)
			{
				PageId		page;

				memcpy(&page, rec->payload + i * sizeof(PageId), sizeof(PageId));
				bp = buffered_lookup(bs, page);
				if (bp != NULL)
					buffered_remove_page(bs, bp);
			}
			break;
		case LOG_FLUSH_BEGIN:
			if (rec->payload_len != rec->hdr.count * sizeof(FlushIntentItem))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("log of index \"%s\" holds a malformed flush record",
								bs->ns.index_name)));
			replay_flush_intent(bs, rec);
			break;
		case LOG_COMMIT:
			break;
		case LOG_END:
			/* log_replay stops at an END: never in a group */
			Assert(false);
			break;
		case LOG_PAGE:
			/* only the write-through store's journal holds page images */
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("log of index \"%s\" holds page images, which its framework does not write",
							bs->ns.index_name),
					 errhint("The log belongs to another kind of index or is damaged; festival.build('%s') rebuilds the index from its source.",
							 bs->ns.index_name)));
	}
}

/*
 * Restart: an index whose meta page is not clean has its buffer rebuilt
 * from the log.  A clean index has nothing to replay; a leftover log is
 * emptied.
 */
void
buffered_recover(BufferedStore *bs)
{
	NodeStore  *ns = &bs->ns;
	LogReplayResult result;
	int64		start;

	if (bs->log == NULL)
		return;
	if (ns->meta->flags & FEST_META_CLEAN)
	{
		if (!log_is_empty(bs->log))
			log_truncate(bs->log);
		return;
	}

	if (bs->log_lost)
	{
		/* nothing to replay from: what was flushed, not trusted */
		ns->suspect = true;
		ns->meta->flags &= ~FEST_META_ENTRIES_VALID;
		ereport(WARNING,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("index \"%s\" was not closed cleanly and its log file is missing: the changes since its last flush are lost",
						ns->index_name),
				 errdetail("An empty log replaces it; until a check finds no error or a build rewrites it, the index refuses changes."),
				 errhint("If the log file still exists, put it back and call festival.close('%s'): the next use replays it. Otherwise run festival.check('%s'); festival.build('%s') rebuilds it.",
						 ns->index_name, ns->index_name, ns->index_name)));
		return;
	}
	start = fest_now_ns();
	bs->replaying = true;
	log_replay(bs->log, apply_record, bs, &result);
	bs->replaying = false;
	buffered_meta_logged_now(bs);
	ns_note_committed(ns);
	ns->stats->recovery_ns += fest_now_ns() - start;
	ns->stats->recoveries++;
	ns->recovered = result.groups;
	/*
	 * The replayed state is exact, unless a flush tore pages; the entry
	 * count is exact if a logged meta restored it (the meta written when
	 * the file was marked unclean does not vouch for it).
	 */
	ns->suspect = bs->torn_pages > 0;
	if (bs->torn_pages > 0)
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" has " UINT64_FORMAT " pages torn by an interrupted flush that its log cannot restore",
						ns->index_name, bs->torn_pages),
				 errdetail("Until a check finds no error or a build rewrites it, the index refuses changes."),
				 errhint("Run festival.check('%s'); festival.build('%s') rebuilds it.",
						 ns->index_name, ns->index_name)));
}
