/*-------------------------------------------------------------------------
 *
 * page.c
 *	  Initialising, sealing and verifying page images.
 *
 * IDENTIFICATION
 *	  src/format/page.c
 *
 *-------------------------------------------------------------------------
 */
#include "format/page.h"

#include "format/crc32c.h"

static uint32
page_checksum(const char *page, uint32 page_size)
{
	return fest_crc32c(page + sizeof(uint32), page_size - sizeof(uint32));
}

/* Zero a page buffer and fill in its header. */
void
fest_page_init(char *page, uint32 page_size, PageId page_id, FestPageKind kind)
{
	FestPageHeader *hdr = FestPageGetHeader(page);

	memset(page, 0, page_size);
	hdr->magic = FEST_PAGE_MAGIC;
	hdr->version = FEST_FORMAT_VERSION;
	hdr->kind = (uint8) kind;
	hdr->page_id = page_id;
}

/* Compute and store the checksum; the last step before a page is written. */
void
fest_page_seal(char *page, uint32 page_size)
{
	FestPageHeader *hdr = FestPageGetHeader(page);

	hdr->checksum = page_checksum(page, page_size);
}

/*
 * Write n node or free-list images whose checksum field is not computed
 * yet (the write-through store's commit).  A page cache with frames
 * (PageIO.frames: the lru family, which seals each once, when it writes it
 * below) gets them as they are, marked verified, through its
 * write_unsealed; any other PageIO gets them sealed here first, in place,
 * so a device, the fault layer, clru or the tiers never see a stale
 * checksum.  With donate, the buffers are given to the cache (each
 * reqs[i].buf is then the caller's buffer back, another one, or NULL); any
 * other PageIO leaves them the caller's.  Returns whether they went
 * unsealed.
 */
bool
fest_page_write_unsealed(PageIO *io, PageIORequest *reqs, int n, bool donate)
{
	if (io->frames == NULL)
	{
		for (int i = 0; i < n; i++)
			fest_page_seal(reqs[i].buf, io->page_size);
		pageio_write_sealed(io, reqs, n);
		return false;
	}
	for (int i = 0; i < n; i++)
	{
		Assert(FestPageGetHeader(reqs[i].buf)->magic == FEST_PAGE_MAGIC);
		reqs[i].verified = true;
	}
	io->frames->ops->write_unsealed(io->frames->owner, reqs, n, donate);
	return true;
}

static bool
page_is_zero(const char *page, uint32 page_size)
{
	for (uint32 i = 0; i < page_size; i++)
		if (page[i] != 0)
			return false;
	return true;
}

/*
 * Check a page image read from a device.  expected_kind 0 accepts any kind.
 * The checksum is tested before any other field is trusted.
 */
FestPageCheck
fest_page_verify(const char *page, uint32 page_size, PageId expected_id,
				 FestPageKind expected_kind)
{
	return fest_page_verify_known(page, page_size, expected_id, expected_kind, false);
}

/*
 * fest_page_verify for an image whose checksum may already be known good
 * (checksum_known: a PageIORequest's verified flag): then only the header
 * is checked, which costs nothing next to a CRC of the whole page.
 */
FestPageCheck
fest_page_verify_known(const char *page, uint32 page_size, PageId expected_id,
					   FestPageKind expected_kind, bool checksum_known)
{
	const FestPageHeader *hdr = (const FestPageHeader *) page;

	if (hdr->magic != FEST_PAGE_MAGIC)
		return page_is_zero(page, page_size) ? FEST_PAGE_NEVER_WRITTEN : FEST_PAGE_BAD_MAGIC;
	/*
	 * A verified image comes from memory: checked by a page cache (which
	 * Asserts it is still intact, cache/cache.c) or written into it by the
	 * store and not sealed yet, its checksum field stale until it leaves.
	 */
	if (!checksum_known && hdr->checksum != page_checksum(page, page_size))
		return FEST_PAGE_BAD_CHECKSUM;
	if (hdr->version != FEST_FORMAT_VERSION)
		return FEST_PAGE_BAD_VERSION;
	if (hdr->page_id != expected_id)
		return FEST_PAGE_WRONG_ID;
	if (expected_kind != 0 && hdr->kind != (uint8) expected_kind)
		return FEST_PAGE_WRONG_KIND;
	return FEST_PAGE_OK;
}

/*
 * Do the magic and the checksum hold?  What a page cache checks once per
 * image it takes from the device or from a writer (the rest of the header
 * is its reader's to check).
 */
bool
fest_page_checksum_ok(const char *page, uint32 page_size)
{
	const FestPageHeader *hdr = (const FestPageHeader *) page;

	return hdr->magic == FEST_PAGE_MAGIC &&
		hdr->checksum == page_checksum(page, page_size);
}

const char *
fest_page_check_message(FestPageCheck check)
{
	switch (check)
	{
		case FEST_PAGE_OK:
			return "page is valid";
		case FEST_PAGE_NEVER_WRITTEN:
			return "page was never written (all zeros)";
		case FEST_PAGE_BAD_MAGIC:
			return "page does not start with festival's page magic";
		case FEST_PAGE_BAD_VERSION:
			return "page has an unknown format version";
		case FEST_PAGE_BAD_CHECKSUM:
			return "page checksum mismatch";
		case FEST_PAGE_WRONG_ID:
			return "page carries another page's number";
		case FEST_PAGE_WRONG_KIND:
			return "page is of an unexpected kind";
		case FEST_PAGE_IMPOSSIBLE:
			return "page header claims an impossible level or number of entries";
	}
	return "unknown page check result";
}

/*
 * The error of a damaged index: ERRCODE_DATA_CORRUPTED naming the index
 * and the page, detail saying what is wrong with it (NULL: nothing more),
 * and the way out.
 */
void
fest_report_corrupt(const char *index_name, PageId page, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at page " UINT64_FORMAT,
					index_name, page),
			 detail != NULL ? errdetail("%s", detail) : 0,
			 errhint("Run festival.check('%s') to list every damaged page, then rebuild the index with festival.build('%s').",
					 index_name, index_name)));
}

/* A reference to a page that is no data page of the file (page_count pages). */
void
fest_report_page_out_of_range(const char *index_name, PageId page,
							  uint64 page_count)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("index \"%s\" refers to page " UINT64_FORMAT ", outside its data pages (2 to " UINT64_FORMAT ")",
					index_name, page, page_count - 1),
			 errhint("Run festival.check('%s') to list every damaged page, then rebuild the index with festival.build('%s').",
					 index_name, index_name)));
}

/* The corruption error for a page that failed fest_page_verify. */
void
fest_page_report_corrupt(FestPageCheck check, const char *index_name,
						 PageId page_id, const char *page, uint32 page_size)
{
	const FestPageHeader *hdr = (const FestPageHeader *) page;

	fest_report_corrupt(index_name, page_id,
						psprintf("%s (stored checksum %08x, computed %08x, stored page number " UINT64_FORMAT ", kind %u).",
								 fest_page_check_message(check),
								 hdr->checksum, page_checksum(page, page_size),
								 hdr->page_id, (unsigned) hdr->kind));
}
