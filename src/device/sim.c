/*-------------------------------------------------------------------------
 *
 * sim.c
 *	  Virtual device time: a deterministic model of a device profile, and
 *	  the PageIO decorator that feeds it every submission.
 *
 * The machine has one virtual disk, so the devices the papers compare
 * (HDD, SATA and NVMe flash, 3DXPoint) are modelled (docs/devices.md).
 * The model is a clock, not a replay of the hardware: it keeps the effects
 * the papers attribute their results to and nothing finer.
 *
 *	- Random vs sequential (Carniel et al. 2016, 2017 section 4, thesis section
 *	  2.2): a page that follows the previous one (previous page + 1) costs only
 *	  its transfer at sequential bandwidth; any other page costs the profile's
 *	  queue-depth-1 latency plus its transfer.  On an HDD a jump within
 *	  track_kb costs half a rotation instead of a seek.
 *	- Batch size vs parallelism (thesis section 2.3, Fevgas 2019): a
 *	  submission of n pages is served in ceil(n / channels) rounds; a round
 *	  costs its slowest page, but no less than its bytes at sequential
 *	  bandwidth, and, when it runs several pages at once, no less than its
 *	  random pages at the high-queue-depth IOPS ceiling.  The sync engine
 *	  submits one page at a time, so only batched engines gain.
 *	- Reads after writes: a read of a region (an erase block, or 256 KB)
 *	  written since the previous read submission waits interference_us,
 *	  the time a pending program keeps its chip busy.
 *	- NAND erase-before-write (Carniel et al. 2016 section 4): writes go
 *	  through a page-mapping FTL (ftl.c); each garbage-collection copy costs a
 *	  read and a program spread over the channels, each erase erase_latency_us.
 *
 * Model 2 (profile model_version 2, docs/devices.md "Model versions") adds
 * what the papers' drives had and model 1 lacks:
 *
 *	- the drive's DRAM cache: an LRU of index pages (cache_mb).  A read of a
 *	  cached page costs cache_hit_us plus its transfer over the host link
 *	  (interface_mbps) and does not move the head; a miss costs what model 1
 *	  charges and leaves the page cached.  With cache_write_back a write is
 *	  acknowledged from the cache (a hit's cost) and the page stays dirty
 *	  until it is evicted, when it is written to the medium (seek, FTL) and
 *	  that cost is charged to the submission that evicted it.  Without
 *	  write-back writes go to the medium and leave a clean copy.  Sync costs
 *	  nothing, as before: FESTIval, which the papers used, opened files with
 *	  O_DIRECT and never asked the drive to flush its cache.
 *	- the drive's real capacity (capacity_gb): the index occupies a small
 *	  part of a mostly empty drive.  Flash: the FTL has the rest of the
 *	  drive (up to SIM_FREE_BLOCKS_MAX blocks) as erased spare blocks, so
 *	  it does not run nearly full.  HDD: a seek over d bytes costs
 *	  min_seek_ms + (avg_seek_ms - min_seek_ms) * sqrt(3 d / capacity)
 *	  (a third of the stroke is the data sheet's average seek) plus half a
 *	  rotation, instead of the full-span latency measured by Iometer.
 *
 * Model 3 (model_version 3) adds what the papers' drives did with command
 * streams, for the comparisons of Carniel et al. 2016 and 2017:
 *
 *	- read-ahead (readahead_kb): a read that misses the cache goes on
 *	  reading the following sectors into the cache while the host works
 *	  (an HDD's look-ahead into its cache segment), at no charge to the
 *	  host; the head ends after them.  Later reads of those pages hit.
 *	- command streams: a command served from the cache (a read hit, a
 *	  write-back write) that continues the previous command (its page
 *	  follows the previous command's last page, same direction) pays only
 *	  its transfer over the host link, not the command overhead again:
 *	  FESTIval, which the papers used, wrote and read a run of consecutive
 *	  pages (a FAST flushing unit) as one system call, and the drive
 *	  appends a sequential stream to the segment it is filling.
 *	- flash has no head: every command pays its access latency, even when
 *	  its first page follows the previous command's last one (model 2
 *	  charged such a page its transfer only, as on an HDD); pages within
 *	  one command still stream.
 *	- flash read-modify-write: a write of a page smaller than the flash
 *	  page (FTL mapping unit) first reads the unit (read_latency_us plus
 *	  its transfer), since only whole units are programmed; not when the
 *	  same command wrote the unit's other part just before.
 *
 * What it is not: no queueing between processes, no thermal or power
 * effects; virtual time says how the access pattern would
 * fare on the profiled device, not how long the real I/O took (io_ns
 * measures that).
 *
 * Everything is a function of the sequence of submissions, so the same
 * workload gives the same virtual time and counters.
 *
 * IDENTIFICATION
 *	  src/device/sim.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/sim.h"

#include <math.h>

#include "stats/jsonbuild.h"
#include "lib/ilist.h"
#include "utils/hsearch.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

/* Regions remembered as written since the last read submission. */
#define SIM_RECENT_REGIONS	64
/*
 * Region size for the interference rule on devices without erase blocks.
 * The rule is keyed to logical regions, which a page-mapping FTL does not
 * follow, so its frequency fades as an index grows; it is listed as fitted
 * (to carniel2017-fig2-ssd-gain-4kb, a calibration claim) in
 * experiments/calibration.json.
 */
#define SIM_DEFAULT_REGION_BYTES (256 * 1024)
/* The IOPS figures of the data sheets are for 4 KB transfers. */
#define SIM_IOPS_BYTES		4096
/*
 * Model 2: most erased blocks the rest of a flash drive lends its FTL
 * (16,384 blocks of 256 KB = 4 GB).  A drive of 480 GB has far more, but
 * a workload would have to write more than this before garbage collection
 * starts, and the FTL's arrays stay small (docs/devices.md).
 */
#define SIM_FREE_BLOCKS_MAX	16384

/* One page in the drive's cache (model 2). */
typedef struct SimCacheEntry
{
	PageId		page;			/* hash key */
	dlist_node	lru;			/* head: most recently used */
	bool		dirty;			/* written by the host, not yet to the medium */
} SimCacheEntry;

struct SimDevice
{
	DeviceProfile prof;
	uint32		page_size;
	uint64		region_bytes;
	int64		clock_ns;
	int64		submissions;
	int64		pages_read;
	int64		pages_written;
	int64		interference_hits;
	PageId		next_page;		/* the page a sequential access would hit */
	bool		positioned;
	uint64		recent[SIM_RECENT_REGIONS];
	int			nrecent;
	Ftl		   *ftl;			/* NULL without NAND flash */
	FtlCounters accounted;		/* FTL counters already added to stats */
	/* model 2: the drive's cache (NULL without one) */
	HTAB	   *cache;
	dlist_head	lru;
	int64		cache_capacity; /* pages */
	int64		cache_used;
	int64		cache_dirty;
	int64		cache_hits;
	int64		cache_misses;
	int64		cache_destages; /* dirty pages written to the medium */
	/* model 3 */
	int64		readahead_pages;	/* pages a read miss also caches */
	int64		cache_readaheads;	/* pages cached by read-ahead */
	bool		streaming;		/* a command has been served */
	bool		stream_write;	/* ... and it was a write */
	PageId		stream_next;	/* the page that would continue it */
	int64		rmw_reads;		/* flash reads of partial-unit writes */
};

const char *const profile_kind_names[] = {"hdd", "ssd", "nvme", "3dxpoint", NULL};

SimDevice *
sim_device_create(const DeviceProfile *profile, uint32 page_size)
{
	SimDevice  *dev = palloc0(sizeof(SimDevice));

	dev->prof = *profile;
	dev->prof.name = pstrdup(profile->name);
	dev->page_size = page_size;
	if (profile_has_ftl(profile))
	{
		dev->ftl = ftl_create(profile->pages_per_block,
							  profile->overprovision_percent);
		dev->region_bytes = (uint64) profile->pages_per_block * profile->flash_page_bytes;
		if (profile->model_version >= PROFILE_MODEL_CACHE && profile->capacity_gb > 0)
		{
			double		blocks = profile->capacity_gb * 1e9 / dev->region_bytes;

			ftl_set_free_space(dev->ftl, (uint32) Min(blocks, (double) SIM_FREE_BLOCKS_MAX));
		}
	}
	else
		dev->region_bytes = SIM_DEFAULT_REGION_BYTES;

	if (profile->model_version >= PROFILE_MODEL_CACHE && profile->cache_mb > 0)
	{
		HASHCTL		ctl;

		dev->cache_capacity = (int64) (profile->cache_mb * 1024 * 1024 / page_size);
		if (dev->cache_capacity >= 1)
		{
			ctl.keysize = sizeof(PageId);
			ctl.entrysize = sizeof(SimCacheEntry);
			ctl.hcxt = CurrentMemoryContext;
			dev->cache = hash_create("festival drive cache",
									 (long) Min(dev->cache_capacity, 65536), &ctl,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
			dlist_init(&dev->lru);
			if (profile->model_version >= PROFILE_MODEL_STREAMS)
				dev->readahead_pages = (int64) (profile->readahead_kb * 1024 / page_size);
		}
	}
	return dev;
}

/* Nanoseconds to move bytes at mbps (10^6 bytes per second). */
static double
transfer_ns(uint64 bytes, double mbps)
{
	return bytes * 1000.0 / mbps;
}

static bool
region_recent(SimDevice *dev, uint64 region)
{
	for (int i = 0; i < dev->nrecent; i++)
		if (dev->recent[i] == region)
			return true;
	return false;
}

static void
remember_region(SimDevice *dev, uint64 region)
{
	if (region_recent(dev, region))
		return;
	if (dev->nrecent == SIM_RECENT_REGIONS)
	{
		memmove(dev->recent, dev->recent + 1,
				(SIM_RECENT_REGIONS - 1) * sizeof(uint64));
		dev->nrecent--;
	}
	dev->recent[dev->nrecent++] = region;
}

/*
 * Model 2, HDD: the seek from the head's position to page, in ns.  The
 * index occupies a small part of the platter, so most seeks are short:
 * min_seek_ms plus the rest of the data sheet's average seek scaled by the
 * square root of the distance over a third of the capacity (the seek
 * profile of a voice-coil actuator), at most twice the average.  Before
 * the first access the head is anywhere: the average seek.
 */
static double
hdd_seek_ns(SimDevice *dev, PageId page)
{
	const DeviceProfile *p = &dev->prof;
	double		dist;
	double		ms;

	if (!dev->positioned)
		return p->avg_seek_ms * 1e6;
	dist = fabs((double) page - (double) dev->next_page) * dev->page_size;
	ms = p->min_seek_ms + (p->avg_seek_ms - p->min_seek_ms) *
		sqrt(3.0 * dist / (p->capacity_gb * 1e9));
	return Min(ms, 2.0 * p->avg_seek_ms) * 1e6;
}

/*
 * Queue-depth-1 cost of one page, in ns; *random tells whether it paid an
 * access latency (for the IOPS ceiling).  Moves the head.
 */
static double
page_cost(SimDevice *dev, PageId page, bool write, bool *random)
{
	const DeviceProfile *p = &dev->prof;
	double		xfer = transfer_ns(dev->page_size,
								   write ? p->seq_write_mbps : p->seq_read_mbps);
	double		cost;

	*random = false;
	if (dev->positioned && page == dev->next_page)
		cost = xfer;
	else if (p->kind == PROFILE_HDD && dev->positioned &&
			 (page > dev->next_page ? page - dev->next_page : dev->next_page - page)
			 * (uint64) dev->page_size <= (uint64) p->track_kb * 1024)
		cost = 30.0e9 / p->rpm + xfer;	/* half a rotation, no seek */
	else if (p->kind == PROFILE_HDD && p->model_version >= PROFILE_MODEL_CACHE &&
			 p->capacity_gb > 0)
	{
		cost = hdd_seek_ns(dev, page) + 30.0e9 / p->rpm + xfer;
		*random = true;
	}
	else
	{
		cost = (write ? p->write_latency_us : p->read_latency_us) * 1000.0 + xfer;
		*random = true;
	}
	dev->next_page = page + 1;
	dev->positioned = true;

	if (!write)
	{
		if (region_recent(dev, (uint64) page * dev->page_size / dev->region_bytes))
		{
			cost += p->interference_us * 1000.0;
			dev->interference_hits++;
		}
	}
	else
		remember_region(dev, (uint64) page * dev->page_size / dev->region_bytes);
	return cost;
}

/* The FTL pages (mapping units) an index page covers. */
static void
ftl_write_page(SimDevice *dev, PageId page)
{
	uint64		unit = dev->prof.flash_page_bytes;
	uint64		first = (uint64) page * dev->page_size / unit;
	uint64		last = ((uint64) (page + 1) * dev->page_size - 1) / unit;

	for (uint64 lpn = first; lpn <= last; lpn++)
		ftl_write(dev->ftl, lpn);
}

/*
 * Model 3: a write of pages[i], smaller than the flash page (the FTL's
 * mapping unit), must first read the unit's other data from flash, merge
 * and program a whole unit (read-modify-write); its cost in ns.  No read
 * when the same command wrote the unit's other part just before.  The
 * unit is taken to hold data whatever the FTL's map says (a drive in use,
 * and a function of the submissions alone, so that festival.replay gives
 * the live time: traces carry no truncations or preconditioning).
 */
static double
rmw_ns(SimDevice *dev, const PageId *pages, int i)
{
	uint64		unit = dev->prof.flash_page_bytes;
	uint64		lpn = (uint64) pages[i] * dev->page_size / unit;

	Assert(dev->ftl != NULL && unit > 0);
	if (dev->prof.model_version < PROFILE_MODEL_STREAMS || dev->page_size >= unit)
		return 0;
	if (i > 0 && (uint64) pages[i - 1] * dev->page_size / unit == lpn)
		return 0;
	dev->rmw_reads++;
	return dev->prof.read_latency_us * 1000.0 +
		transfer_ns(unit, dev->prof.seq_read_mbps);
}

/* ---------------------------------------------------------------------
 * Model 2: the drive's cache.
 * ---------------------------------------------------------------------
 */

/* A cache hit: the command overhead and the transfer over the host link. */
static double
hit_ns(SimDevice *dev)
{
	const DeviceProfile *p = &dev->prof;

	return p->cache_hit_us * 1000.0 +
		transfer_ns(dev->page_size,
					p->interface_mbps > 0 ? p->interface_mbps : p->seq_read_mbps);
}

/* Write a dirty page from the cache to the medium; its cost in ns. */
static double
destage(SimDevice *dev, PageId page)
{
	bool		random;
	double		cost = page_cost(dev, page, true, &random);

	if (dev->ftl != NULL)
		ftl_write_page(dev, page);
	dev->cache_destages++;
	return cost;
}

/*
 * Make page the most recently used cached page (dirty if asked), evicting
 * the least recently used one when the cache is full; returns the cost of
 * writing an evicted dirty page to the medium.
 */
static double
cache_put(SimDevice *dev, PageId page, bool dirty)
{
	SimCacheEntry *e = hash_search(dev->cache, &page, HASH_FIND, NULL);
	double		cost = 0;
	bool		found;

	if (e != NULL)
		dlist_delete(&e->lru);
	else
	{
		if (dev->cache_used == dev->cache_capacity)
		{
			SimCacheEntry *victim = dlist_tail_element(SimCacheEntry, lru, &dev->lru);
			PageId		vpage = victim->page;
			bool		vdirty = victim->dirty;

			dlist_delete(&victim->lru);
			hash_search(dev->cache, &vpage, HASH_REMOVE, NULL);
			dev->cache_used--;
			if (vdirty)
			{
				dev->cache_dirty--;
				cost += destage(dev, vpage);
			}
		}
		e = hash_search(dev->cache, &page, HASH_ENTER, &found);
		Assert(!found);
		e->dirty = false;
		dev->cache_used++;
	}
	if (dirty && !e->dirty)
	{
		e->dirty = true;
		dev->cache_dirty++;
	}
	dlist_push_head(&dev->lru, &e->lru);
	Assert(dev->cache_used <= dev->cache_capacity);
	Assert(dev->cache_dirty <= dev->cache_used);
	return cost;
}

/*
 * Model 3: the read-ahead after a read miss of page.  The pages that follow
 * it and are not cached yet become clean cached pages (pages already
 * cached keep their place in the LRU); the head ends after the last one.
 * Returns the cost of dirty pages the read-ahead evicted.
 */
static double
read_ahead(SimDevice *dev, PageId page)
{
	double		cost = 0;

	Assert(dev->cache != NULL);
	for (int64 i = 1; i <= dev->readahead_pages; i++)
	{
		PageId		next = page + i;

		if (hash_search(dev->cache, &next, HASH_FIND, NULL) != NULL)
			continue;
		cost += cache_put(dev, next, false);
		dev->cache_readaheads++;
	}
	if (dev->readahead_pages > 0)
		dev->next_page = page + 1 + dev->readahead_pages;
	return cost;
}

/*
 * A command served from the cache: a hit's cost, or (model 3) only the
 * transfer over the host link when it continues the previous command.
 */
static double
served_from_cache(SimDevice *dev, bool continues)
{
	const DeviceProfile *p = &dev->prof;

	if (continues)
		return transfer_ns(dev->page_size,
						   p->interface_mbps > 0 ? p->interface_mbps : p->seq_read_mbps);
	return hit_ns(dev);
}

/*
 * The queue-depth-1 cost of one page with the drive's cache in front of
 * the medium; *evict_ns gets the cost of dirty pages the access evicted,
 * *to_medium whether a write reached the medium (and so the FTL) now.
 */
static double
access_cost(SimDevice *dev, PageId page, bool write, bool *random,
			double *evict_ns, bool *to_medium)
{
	double		cost;
	bool		continues;

	*to_medium = write;
	if (dev->cache == NULL)
		return page_cost(dev, page, write, random);

	/* model 3: does this page continue the previous command? */
	continues = dev->prof.model_version >= PROFILE_MODEL_STREAMS &&
		dev->streaming && page == dev->stream_next && write == dev->stream_write;
	dev->streaming = true;
	dev->stream_next = page + 1;
	dev->stream_write = write;

	if (!write)
	{
		SimCacheEntry *e = hash_search(dev->cache, &page, HASH_FIND, NULL);

		if (e != NULL)
		{
			dev->cache_hits++;
			dlist_move_head(&dev->lru, &e->lru);
			*random = false;
			return served_from_cache(dev, continues);
		}
		dev->cache_misses++;
		cost = page_cost(dev, page, false, random);
		*evict_ns += cache_put(dev, page, false);
		if (dev->readahead_pages > 0)
			*evict_ns += read_ahead(dev, page);
		return cost;
	}
	if (dev->prof.cache_write_back)
	{
		*to_medium = false;
		*random = false;
		*evict_ns += cache_put(dev, page, true);
		return served_from_cache(dev, continues);
	}
	cost = page_cost(dev, page, true, random);
	*evict_ns += cache_put(dev, page, false);
	return cost;
}

/*
 * Advance the clock for one submission of n pages and add the time and
 * FTL work to stats.
 */
void
sim_submit(SimDevice *dev, const PageId *pages, int n, bool write,
		   FestStats *stats)
{
	const DeviceProfile *p = &dev->prof;
	double		mbps = write ? p->seq_write_mbps : p->seq_read_mbps;
	double		iops = write ? p->rand_write_iops_qd32 : p->rand_read_iops_qd32;
	double		total = 0;
	double		evict_ns = 0;
	int64		copies_before = 0;
	int64		erases_before = 0;

	if (dev->ftl != NULL)
	{
		copies_before = ftl_counters(dev->ftl)->gc_copies;
		erases_before = ftl_counters(dev->ftl)->erases;
	}

	/*
	 * Model 3: flash has no head, so a command's first page pays the
	 * access latency wherever the previous command ended.
	 */
	if (p->model_version >= PROFILE_MODEL_STREAMS && p->kind != PROFILE_HDD)
		dev->positioned = false;

	for (int first = 0; first < n; first += p->channels)
	{
		int			k = Min(p->channels, n - first);
		double		slowest = 0;
		int			randoms = 0;
		double		round;

		for (int i = first; i < first + k; i++)
		{
			bool		random;
			bool		to_medium;
			double		cost = access_cost(dev, pages[i], write, &random,
										   &evict_ns, &to_medium);

			if (to_medium && dev->ftl != NULL)
			{
				cost += rmw_ns(dev, pages, i);
				ftl_write_page(dev, pages[i]);
			}
			slowest = Max(slowest, cost);
			randoms += random ? 1 : 0;
		}
		round = slowest;
		/* cache hits (model 2) come over the host link, not the medium */
		if (dev->cache == NULL || randoms > 0)
			round = Max(round, k * transfer_ns(dev->page_size, mbps));
		if (k > 1)
			round = Max(round, randoms * 1.0e9 / iops *
						((double) dev->page_size / SIM_IOPS_BYTES));
		total += round;
	}
	total += evict_ns;

	if (dev->ftl != NULL)
	{
		const FtlCounters *c = ftl_counters(dev->ftl);

		total += (c->gc_copies - copies_before) *
			(p->read_latency_us + p->write_latency_us) * 1000.0 / p->channels;
		total += (c->erases - erases_before) * p->erase_latency_us * 1000.0;
	}
	if (!write)
		dev->nrecent = 0;		/* the pending programs have been waited for */

	dev->clock_ns += (int64) total;
	dev->submissions++;
	if (write)
		dev->pages_written += n;
	else
		dev->pages_read += n;

	stats->device_ns += (int64) total;
	if (dev->ftl != NULL)
	{
		const FtlCounters *c = ftl_counters(dev->ftl);

		stats->device_erases += c->erases - dev->accounted.erases;
		stats->ftl_host_writes += c->host_writes - dev->accounted.host_writes;
		stats->ftl_flash_writes += c->flash_writes - dev->accounted.flash_writes;
		stats->ftl_gc_runs += c->gc_runs - dev->accounted.gc_runs;
		dev->accounted = *c;
	}
}

/* First FTL page wholly at or after index page npages. */
static uint64
first_unit_at(SimDevice *dev, uint64 npages)
{
	uint64		unit = dev->prof.flash_page_bytes;

	return (npages * dev->page_size + unit - 1) / unit;
}

/* The file was truncated to npages: the drive sees a trim. */
void
sim_truncate(SimDevice *dev, uint64 npages)
{
	if (dev->ftl != NULL)
		ftl_trim_from(dev->ftl, first_unit_at(dev, npages));
	/* cached pages past the end are gone, dirty or not */
	if (dev->cache != NULL)
	{
		dlist_mutable_iter it;

		dlist_foreach_modify(it, &dev->lru)
		{
			SimCacheEntry *e = dlist_container(SimCacheEntry, lru, it.cur);
			PageId		page = e->page;

			if (page < npages)
				continue;
			if (e->dirty)
				dev->cache_dirty--;
			dlist_delete(&e->lru);
			hash_search(dev->cache, &page, HASH_REMOVE, NULL);
			dev->cache_used--;
		}
	}
}

/* An existing file of npages was opened: lay it out on a fresh drive. */
void
sim_precondition(SimDevice *dev, uint64 npages)
{
	if (dev->ftl != NULL)
	{
		ftl_precondition(dev->ftl, first_unit_at(dev, npages));
		dev->accounted = *ftl_counters(dev->ftl);
	}
}

static void
jb_float(JsonbParseState **state, const char *key, double value)
{
	jb_numeric(state, key,
			   DatumGetNumeric(DirectFunctionCall1(float8_numeric,
												   Float8GetDatum(value))));
}

/* The state of the simulated drive, as key/value pairs. */
void
sim_push_jsonb(const SimDevice *dev, JsonbParseState **state)
{
	jb_string(state, "profile", dev->prof.name);
	jb_string(state, "kind", profile_kind_names[dev->prof.kind]);
	jb_numeric(state, "virtual_seconds", int64_div_fast_to_numeric(dev->clock_ns, 9));
	jb_int(state, "submissions", dev->submissions);
	jb_int(state, "pages_read", dev->pages_read);
	jb_int(state, "pages_written", dev->pages_written);
	jb_int(state, "interference_hits", dev->interference_hits);
	jb_int(state, "model_version", dev->prof.model_version);
	if (dev->cache != NULL)
	{
		jb_int(state, "cache_pages", dev->cache_capacity);
		jb_int(state, "cache_used", dev->cache_used);
		jb_int(state, "cache_dirty", dev->cache_dirty);
		jb_int(state, "cache_hits", dev->cache_hits);
		jb_int(state, "cache_misses", dev->cache_misses);
		jb_int(state, "cache_destages", dev->cache_destages);
		if (dev->prof.model_version >= PROFILE_MODEL_STREAMS)
		{
			jb_int(state, "readahead_pages", dev->readahead_pages);
			jb_int(state, "cache_readaheads", dev->cache_readaheads);
		}
	}
	if (dev->ftl != NULL)
	{
		const FtlCounters *c = ftl_counters(dev->ftl);
		FtlState	st;

		ftl_state(dev->ftl, &st);
		jb_int(state, "host_writes", c->host_writes);
		jb_int(state, "flash_writes", c->flash_writes);
		if (c->host_writes > 0)
			jb_float(state, "write_amplification",
					 round((double) c->flash_writes / c->host_writes * 1e6) / 1e6);
		else
			jb_null(state, "write_amplification");
		jb_int(state, "gc_runs", c->gc_runs);
		jb_int(state, "gc_copies", c->gc_copies);
		jb_int(state, "erases", c->erases);
		jb_int(state, "blocks", st.blocks);
		jb_int(state, "free_blocks", st.free_blocks);
		jb_int(state, "valid_pages", (int64) st.valid_pages);
		jb_int(state, "logical_pages", (int64) st.logical_pages);
		jb_int(state, "wear_min", st.wear_min);
		jb_int(state, "wear_max", st.wear_max);
		if (dev->prof.model_version >= PROFILE_MODEL_STREAMS)
			jb_int(state, "rmw_reads", dev->rmw_reads);
		jb_int(state, "flash_page_bytes", dev->prof.flash_page_bytes);
		jb_int(state, "pages_per_block", dev->prof.pages_per_block);
	}
}

/* ---------------------------------------------------------------------
 * The decorator.
 * ---------------------------------------------------------------------
 */

typedef struct SimPageIO
{
	PageIO		io;				/* must be first */
	SimDevice  *dev;
	bool		batched;
} SimPageIO;

static void
account(SimPageIO *s, PageIORequest *reqs, int n, bool write)
{
	PageId		one[1];
	PageId	   *pages;

	if (!s->batched)
	{
		/* the sync engine: every page is its own submission */
		for (int i = 0; i < n; i++)
		{
			one[0] = reqs[i].page;
			sim_submit(s->dev, one, 1, write, s->io.stats);
		}
		return;
	}
	pages = palloc(n * sizeof(PageId));
	for (int i = 0; i < n; i++)
		pages[i] = reqs[i].page;
	sim_submit(s->dev, pages, n, write, s->io.stats);
	pfree(pages);
}

/*
 * A profiled device's reads and writes cost their virtual time; the CPU the
 * host spends on them (the kernel's page-cache copies below a file device,
 * memcpy below a memory one, and this model) is counted apart in
 * modelled_io_cpu_ns and left out of the index CPU time, which would
 * otherwise count the transfer twice (docs/measurements.md).  Syncs pass
 * through: the file device counts theirs in sync_cpu_ns.
 */
static void
sim_read(PageIO *io, PageIORequest *reqs, int n)
{
	int64		start_cpu = fest_cpu_ns();

	pageio_read(io->below, reqs, n);
	account((SimPageIO *) io, reqs, n, false);
	io->stats->modelled_io_cpu_ns += fest_cpu_ns() - start_cpu;
}

static void
sim_write(PageIO *io, PageIORequest *reqs, int n)
{
	int64		start_cpu = fest_cpu_ns();

	pageio_write(io->below, reqs, n);
	account((SimPageIO *) io, reqs, n, true);
	io->stats->modelled_io_cpu_ns += fest_cpu_ns() - start_cpu;
}

static void
sim_truncate_io(PageIO *io, uint64 npages)
{
	pageio_truncate(io->below, npages);
	sim_truncate(((SimPageIO *) io)->dev, npages);
}

/*
 * sync, npages, close and flush pass through.  Syncing costs no virtual
 * time: model 1 has no drive cache, and model 2 assumes, as the papers'
 * FESTIval did, that nothing asks the drive to flush it (see the file
 * header).
 */
static const PageIOOps sim_pageio_ops = {
	.read = sim_read,
	.write = sim_write,
	.truncate = sim_truncate_io
};

/*
 * Stack the model over the device's PageIO.  The SimDevice is the
 * caller's (it may outlive this PageIO: see device/open.c).
 */
PageIO *
sim_pageio_create(PageIO *below, SimDevice *dev, bool batched)
{
	SimPageIO  *s = palloc0(sizeof(SimPageIO));

	pageio_wrap_init(&s->io, &sim_pageio_ops, below);
	s->dev = dev;
	s->batched = batched;
	return &s->io;
}
