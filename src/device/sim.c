/*-------------------------------------------------------------------------
 *
 * sim.c
 *	  Virtual device time: a deterministic model of a device profile, and
 *	  the PageIO decorator that feeds it every submission.
 *
 * The machine has one virtual disk, so the devices the papers compare
 * (HDD, SATA and NVMe flash, 3DXPoint) are modelled (DESIGN.md section 5).
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
 * What it is not: no caches inside the drive, no queueing between
 * processes, no thermal or power effects; virtual time says how the access
 * pattern would fare on the profiled device, not how long the real I/O
 * took (io_ns measures that).
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
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

/* Regions remembered as written since the last read submission. */
#define SIM_RECENT_REGIONS	64
/* Region size for the interference rule on devices without erase blocks. */
#define SIM_DEFAULT_REGION_BYTES (256 * 1024)
/* The IOPS figures of the data sheets are for 4 KB transfers. */
#define SIM_IOPS_BYTES		4096

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
	}
	else
		dev->region_bytes = SIM_DEFAULT_REGION_BYTES;
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

	for (int first = 0; first < n; first += p->channels)
	{
		int			k = Min(p->channels, n - first);
		double		slowest = 0;
		int			randoms = 0;
		double		round;

		for (int i = first; i < first + k; i++)
		{
			bool		random;
			double		cost = page_cost(dev, pages[i], write, &random);

			slowest = Max(slowest, cost);
			randoms += random ? 1 : 0;
		}
		round = Max(slowest, k * transfer_ns(dev->page_size, mbps));
		if (k > 1)
			round = Max(round, randoms * 1.0e9 / iops *
						((double) dev->page_size / SIM_IOPS_BYTES));
		total += round;
	}

	if (write && dev->ftl != NULL)
	{
		const FtlCounters *c = ftl_counters(dev->ftl);
		int64		copies_before = c->gc_copies;
		int64		erases_before = c->erases;

		for (int i = 0; i < n; i++)
			ftl_write_page(dev, pages[i]);
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

int64
sim_clock_ns(const SimDevice *dev)
{
	return dev->clock_ns;
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
	PageIO	   *below;
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

static void
sim_read(PageIO *io, PageIORequest *reqs, int n)
{
	SimPageIO  *s = (SimPageIO *) io;

	s->below->time_cpu = io->time_cpu;
	pageio_read(s->below, reqs, n);
	account(s, reqs, n, false);
}

static void
sim_write(PageIO *io, PageIORequest *reqs, int n)
{
	SimPageIO  *s = (SimPageIO *) io;

	s->below->time_cpu = io->time_cpu;
	pageio_write(s->below, reqs, n);
	account(s, reqs, n, true);
}

/* Syncing costs no virtual time: the model has no volatile drive cache. */
static void
sim_sync(PageIO *io)
{
	pageio_sync(((SimPageIO *) io)->below);
}

static void
sim_truncate_io(PageIO *io, uint64 npages)
{
	SimPageIO  *s = (SimPageIO *) io;

	s->below->ops->truncate(s->below, npages);
	sim_truncate(s->dev, npages);
}

static uint64
sim_npages(PageIO *io)
{
	SimPageIO  *s = (SimPageIO *) io;

	return s->below->ops->npages(s->below);
}

static void
sim_close(PageIO *io)
{
	SimPageIO  *s = (SimPageIO *) io;

	s->below->ops->close(s->below);
}

static const PageIOOps sim_pageio_ops = {
	.read = sim_read,
	.write = sim_write,
	.sync = sim_sync,
	.truncate = sim_truncate_io,
	.npages = sim_npages,
	.close = sim_close
};

/*
 * Stack the model over the device's PageIO.  The SimDevice is the
 * caller's (it may outlive this PageIO: see device/open.c).
 */
PageIO *
sim_pageio_create(PageIO *below, SimDevice *dev, bool batched)
{
	SimPageIO  *s = palloc0(sizeof(SimPageIO));

	s->io.ops = &sim_pageio_ops;
	s->io.page_size = below->page_size;
	s->io.stats = below->stats;
	s->io.label = below->label;
	s->io.fault = below->fault;
	s->below = below;
	s->dev = dev;
	s->batched = batched;
	return &s->io;
}
