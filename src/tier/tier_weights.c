/*-------------------------------------------------------------------------
 *
 * tier_weights.c
 *	  The hot-page weights file of a tiered index ("<index file>.tierhot"):
 *	  the detector's whole state (tier_hot.c, tier_observer.c), so that hot,
 *	  level_hot and random continue after a close exactly as if the index
 *	  had stayed open.  Its format, all of it, is here.
 *
 * Layout (little-endian):
 *	offset size field
 *	     0    4 magic		0x57524954 ("TIRW")
 *	     4    2 version		TIERWEIGHTS_VERSION (2; 1 lacked the tuning fields)
 *	     6    2 flags		0 (none defined)
 *	     8    8 length		bytes of the body that follows
 *	    16    4 crc			CRC32C of the body
 *	    20    4 reserved	0
 *	    24    length		the body:
 *
 *	body: TierWeightsHead, 56 + 32 * FEST_MAX_LEVELS bytes
 *	     0    4 placement	the TierPlacement it was written for
 *	     4    4 top_level	highest level read (the root's)
 *	     8    8 clock		the model's logical clock
 *	    16    8 nhot		hot pages
 *	    24    8 prng_state	random's generator
 *	    32    8 npages		TierWeightsPage records that follow
 *	    40    8 * L max_count	per level: the largest access count
 *	     .    8 * L wsum	per level: the moving average's sum (float8)
 *	     .    8 * L wn		per level: its count
 *	     .    8 * L last_read	per level: the last page read (parent inference)
 *	     .    8 selectivity	s now (float8; hot_selectivity_tuning auto moves it)
 *	     .    8 epoch_demotions	capacity demotions in the epoch so far (the tuning rule)
 *	then one TierWeightsPage (48 bytes) per page the detector knows:
 *	     0    8 page
 *	     8    8 count		accesses
 *	    16    8 last		clock of the last access (demotion's LRU order)
 *	    24    8 weight		at the last access (float8)
 *	    32    8 parent		0: none
 *	    40    1 hot
 *	    41    7 reserved	0
 *
 * Written as the map is (temporary file, fsync, durable_rename:
 * tier_file_replace), only at a flush or a close (the router's flush),
 * when the detector changed, and before the map is marked clean: a clean
 * map never has older weights.  After a crash the file may be older than
 * the map.  Reading it never raises: the weights only steer placement, so
 * a missing or damaged file is reported (a WARNING) and the open falls back
 * to every fast node page hot with no history.
 *
 * IDENTIFICATION
 *	  src/tier/tier_weights.c
 *
 *-------------------------------------------------------------------------
 */
#include "tier/tier_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port/pg_crc32c.h"
#include "utils/float.h"

#define TIERWEIGHTS_MAGIC	0x57524954
#define TIERWEIGHTS_VERSION 2

typedef struct TierWeightsHeader
{
	uint32		magic;
	uint16		version;
	uint16		flags;
	uint64		length;
	uint32		crc;
	uint32		reserved;
} TierWeightsHeader;

StaticAssertDecl(sizeof(TierWeightsHeader) == 24,
				 "TierWeightsHeader must be 24 bytes");

/*
 * Replace the weights file at path, durably and atomically.  The fault
 * layer's "tier_write" target fails or kills the write half-way through the
 * temporary file: the file in place survives.
 */
static void
weights_file_write(const char *path, const void *body, size_t len,
				   FaultState *fs)
{
	TierWeightsHeader h;
	pg_crc32c	crc;
	TierFilePart parts[2];

	memset(&h, 0, sizeof(h));
	h.magic = TIERWEIGHTS_MAGIC;
	h.version = TIERWEIGHTS_VERSION;
	h.length = len;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, body, len);
	FIN_CRC32C(crc);
	h.crc = crc;

	parts[0] = (TierFilePart) {&h, sizeof(h)};
	parts[1] = (TierFilePart) {body, len};
	tier_file_replace(path, "hot-page weights file",
					  "Check the space of the index's device directory; the weights written at the previous flush stay in place.",
					  parts, lengthof(parts), fs, FAULT_TIER_WRITE);
}

/*
 * Read and verify the weights file at path: the body (allocated in cxt)
 * and its length, or NULL with *problem saying why (missing, damaged).
 */
static char *
weights_file_read(const char *path, size_t *len, const char **problem,
				  MemoryContext cxt)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	struct stat st;
	TierWeightsHeader h;
	char	   *body;
	pg_crc32c	crc;

	*problem = NULL;
	if (fd < 0)
	{
		*problem = errno == ENOENT ? "missing" : "unreadable";
		return NULL;
	}
	if (fstat(fd, &st) != 0 || st.st_size < (off_t) sizeof(h) ||
		read(fd, &h, sizeof(h)) != sizeof(h))
		*problem = "shorter than its header";
	else if (h.magic != TIERWEIGHTS_MAGIC)
		*problem = "bad magic number";
	else if (h.version != TIERWEIGHTS_VERSION)
		*problem = "unknown version";
	else if (h.length != (uint64) st.st_size - sizeof(h))
		*problem = "its size does not match its header";
	if (*problem != NULL)
	{
		close(fd);
		return NULL;
	}
	body = MemoryContextAllocHuge(cxt, Max(h.length, 1));
	if (read(fd, body, h.length) != (ssize_t) h.length)
	{
		close(fd);
		*problem = "short read";
		pfree(body);
		return NULL;
	}
	close(fd);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, body, h.length);
	FIN_CRC32C(crc);
	if (crc != h.crc)
	{
		*problem = "checksum mismatch";
		pfree(body);
		return NULL;
	}
	*len = h.length;
	return body;
}

/*
 * The body of the weights file (tier_map.c has its header): the detector's
 * whole state, so that hot, level_hot and random continue after a close
 * exactly as if the index had stayed open: the model's clock, counts and
 * per-level sums, every page's history (count, clock of its last access,
 * which is also demotion's LRU order, weight, parent, hot), the parent
 * inference's last page per level and the random generator.
 */
typedef struct TierWeightsHead
{
	int32		placement;		/* a TierPlacement: the file is for this one */
	int32		top_level;
	int64		clock;
	int64		nhot;
	uint64		prng_state;
	uint64		npages;			/* TierWeightsPage records that follow */
	int64		max_count[FEST_MAX_LEVELS];
	double		wsum[FEST_MAX_LEVELS];
	int64		wn[FEST_MAX_LEVELS];
	PageId		last_read[FEST_MAX_LEVELS];
	double		selectivity;	/* s now (tier_hot.c, hot_model_epoch_end) */
	int64		epoch_demotions;
} TierWeightsHead;

typedef struct TierWeightsPage
{
	PageId		page;
	int64		count;
	int64		last;
	double		weight;
	PageId		parent;
	uint8		hot;
	uint8		reserved[7];
} TierWeightsPage;

StaticAssertDecl(sizeof(TierWeightsHead) == 56 + 32 * FEST_MAX_LEVELS,
				 "TierWeightsHead has no padding");
StaticAssertDecl(sizeof(TierWeightsPage) == 48,
				 "TierWeightsPage must be 48 bytes");

static void hot_from_map(TierState *ts);

/* Write the detector's state to the weights file (at a flush or close). */
void
tier_weights_save(TierState *ts)
{
	long		npages = hash_get_num_entries(ts->hot.pages);
	size_t		len = sizeof(TierWeightsHead) + sizeof(TierWeightsPage) * npages;
	char	   *body = MemoryContextAllocHuge(ts->cxt, len);
	TierWeightsHead *head = (TierWeightsHead *) body;
	TierWeightsPage *rec = (TierWeightsPage *) (body + sizeof(TierWeightsHead));
	HASH_SEQ_STATUS seq;
	HotPage    *p;
	long		i = 0;

	memset(body, 0, len);
	head->placement = ts->opt.placement;
	head->top_level = ts->top_level;
	head->clock = ts->hot.clock;
	head->nhot = ts->hot.nhot;
	head->prng_state = ts->prng.state;
	head->npages = npages;
	memcpy(head->max_count, ts->hot.max_count, sizeof(head->max_count));
	memcpy(head->wsum, ts->hot.wsum, sizeof(head->wsum));
	memcpy(head->wn, ts->hot.wn, sizeof(head->wn));
	memcpy(head->last_read, ts->last_read, sizeof(head->last_read));
	head->selectivity = ts->hot.selectivity;
	head->epoch_demotions = ts->hot.epoch_demotions;
	hash_seq_init(&seq, ts->hot.pages);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		Assert(i < npages);
		rec[i].page = p->page;
		rec[i].count = p->count;
		rec[i].last = p->last;
		rec[i].weight = p->weight;
		rec[i].parent = p->parent;
		rec[i].hot = p->hot ? 1 : 0;
		i++;
	}
	Assert(i == npages);
	weights_file_write(ts->weights_path, body, len, ts->router.fault);
	pfree(body);
}

/*
 * Check a weights body against the index it is read for; NULL when it
 * fits, else what is wrong.
 */
static const char *
weights_problem(const TierState *ts, const char *body, size_t len)
{
	const TierWeightsHead *head = (const TierWeightsHead *) body;
	int64		nhot = 0;
	const TierWeightsPage *rec;

	if (len < sizeof(TierWeightsHead) ||
		(len - sizeof(TierWeightsHead)) / sizeof(TierWeightsPage) != head->npages ||
		(len - sizeof(TierWeightsHead)) % sizeof(TierWeightsPage) != 0)
		return "its length does not match its page count";
	if (head->placement != ts->opt.placement)
		return "it was written for another placement";
	if (head->top_level < 0 || head->top_level >= FEST_MAX_LEVELS ||
		head->clock < 0 || head->nhot < 0 || head->epoch_demotions < 0 ||
		!(head->selectivity >= HOT_TUNE_MIN && head->selectivity <= HOT_TUNE_MAX))
		return "its model is out of range";
	rec = (const TierWeightsPage *) (body + sizeof(TierWeightsHead));
	for (uint64 i = 0; i < head->npages; i++)
	{
		/* count 0: a page hot with no history (a fallback, hot_from_map) */
		if (rec[i].count < 0 || rec[i].last < 0 || rec[i].last > head->clock ||
			rec[i].hot > 1)
			return "a page's history is out of range";
		nhot += rec[i].hot;
	}
	if (nhot != head->nhot)
		return "its hot count does not match its pages";
	return NULL;
}

/*
 * At an open: restore the detector from the weights file.  Missing (an
 * index never flushed with a detector, or from before the file existed)
 * or damaged (a WARNING: the weights only steer placement, so the index
 * stays usable): every fast node page counts as hot with no history, the
 * parents of the promotions to come.  after_crash: the map was in use, so
 * the weights (written at the last flush) may be older than the map; the
 * hot set is then made the fast pages again, which check() requires.
 */
void
tier_weights_load(TierState *ts, bool after_crash)
{
	size_t		len = 0;
	const char *problem;
	char	   *body = weights_file_read(ts->weights_path, &len, &problem, ts->cxt);

	if (body != NULL)
		problem = weights_problem(ts, body, len);
	if (body != NULL && problem == NULL)
	{
		const TierWeightsHead *head = (const TierWeightsHead *) body;
		const TierWeightsPage *rec = (const TierWeightsPage *) (body + sizeof(TierWeightsHead));

		ts->top_level = head->top_level;
		ts->hot.clock = head->clock;
		ts->hot.nhot = head->nhot;
		ts->prng.state = head->prng_state;
		memcpy(ts->hot.max_count, head->max_count, sizeof(head->max_count));
		memcpy(ts->hot.wsum, head->wsum, sizeof(head->wsum));
		memcpy(ts->hot.wn, head->wn, sizeof(head->wn));
		memcpy(ts->last_read, head->last_read, sizeof(head->last_read));
		ts->hot.selectivity = head->selectivity;
		ts->hot.epoch_demotions = head->epoch_demotions;
		for (uint64 i = 0; i < head->npages; i++)
		{
			bool		found;
			HotPage    *p = hash_search(ts->hot.pages, &rec[i].page, HASH_ENTER, &found);

			if (found)
			{
				problem = "a page is listed twice";
				break;
			}
			p->count = rec[i].count;
			p->last = rec[i].last;
			p->weight = rec[i].weight;
			p->parent = rec[i].parent;
			p->hot = rec[i].hot != 0;
		}
		pfree(body);
		if (problem == NULL)
		{
			if (after_crash && ts->opt.placement != TIER_RANDOM)
				hot_from_map(ts);
			return;
		}
		/* start again from nothing */
		hash_destroy(ts->hot.pages);
		hot_model_init(&ts->hot, ts->opt.selectivity, ts->opt.capacity_pages, ts->cxt);
		ts->top_level = 0;
		memset(ts->last_read, 0, sizeof(ts->last_read));
		prng_init(&ts->prng, ts->opt.seed, UINT64CONST(0x452821E638D01377));
	}
	if (strcmp(problem, "missing") != 0)
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("hot-page weights \"%s\" of index \"%s\" are damaged: %s",
						ts->weights_path, ts->index_name, problem),
				 errdetail("The index is intact; its fast pages now count as hot with no access history."),
				 errhint("Nothing to do: the weights only steer placement, and the next flush or close writes them again.")));
	for (PageId page = 0; page < ts->nentries; page++)
	{
		uint8		e = ts->entry[page];

		if ((e & (ENTRY_PRESENT | ENTRY_FAST)) == (ENTRY_PRESENT | ENTRY_FAST) &&
			ENTRY_LEVEL(e) >= 0)
		{
			HotPage    *p = hash_search(ts->hot.pages, &page, HASH_ENTER, NULL);

			memset(p, 0, sizeof(HotPage));
			p->page = page;
			p->hot = true;
			ts->hot.nhot++;
		}
	}
	/* the detector's state differs from the file's: write it at the next flush */
	ts->weights_dirty = true;
}

/*
 * hot, level_hot after a crash: the hot set below the level part is the
 * fast node pages the map names (a page the weights call hot that the map
 * keeps slow never moved; a fast one the weights do not know moved after
 * them), the others keep their history.
 */
static void
hot_from_map(TierState *ts)
{
	HASH_SEQ_STATUS seq;
	HotPage    *p;

	hash_seq_init(&seq, ts->hot.pages);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		uint8		e = p->page < ts->nentries ? ts->entry[p->page] : 0;

		if (p->hot && ((e & ENTRY_FAST) == 0 || ENTRY_LEVEL(e) < 0) &&
			!is_level_fast(ts, ENTRY_LEVEL(e)))
		{
			p->hot = false;
			ts->hot.nhot--;
		}
	}
	for (PageId page = 0; page < ts->nentries; page++)
	{
		uint8		e = ts->entry[page];
		bool		found;

		if ((e & (ENTRY_PRESENT | ENTRY_FAST)) != (ENTRY_PRESENT | ENTRY_FAST) ||
			ENTRY_LEVEL(e) < 0 || is_level_fast(ts, ENTRY_LEVEL(e)))
			continue;
		p = hash_search(ts->hot.pages, &page, HASH_ENTER, &found);
		if (!found)
		{
			memset(p, 0, sizeof(HotPage));
			p->page = page;
		}
		if (!p->hot)
		{
			p->hot = true;
			ts->hot.nhot++;
		}
	}
	ts->weights_dirty = true;
}
