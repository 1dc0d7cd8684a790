/*-------------------------------------------------------------------------
 *
 * profile.h
 *	  Device profiles (rows of festival.device_profile): what the device
 *	  model (device/sim.c) needs to advance a virtual clock.
 *
 * The model's inputs are deliberately few (docs/devices.md, "Devices and
 * virtual time"): a queue-depth-1 latency per random access, sequential
 * bandwidth, a high-queue-depth IOPS ceiling, internal parallelism
 * (channels), a read-after-write interference penalty, HDD rotation and
 * track size, and for NAND flash the FTL geometry (mapping unit, pages per
 * block, erase latency, over-provisioning).  Model 2 (model_version) adds
 * the drive's DRAM cache and its real capacity; model 1 ignores them.
 * Model 3 adds the drive's read-ahead, command streams and flash's
 * positionless commands (docs/devices.md, "Model versions").
 *
 * The shipped profiles' values (festival--0.2.sql) each have a source in
 * experiments/calibration.json: data sheet, the papers, the papers' own
 * measurements, assumed, or fitted to a claim of the calibration set
 * (docs/devices.md; scripts/reproduce checks the values against the table
 * and refuses a parameter fitted to a held-out claim).
 *
 * IDENTIFICATION
 *	  src/device/profile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_PROFILE_H
#define FEST_PROFILE_H

#include "festival.h"

typedef enum ProfileKind
{
	PROFILE_HDD,
	PROFILE_SSD,				/* NAND flash behind SATA */
	PROFILE_NVME,				/* NAND flash behind NVMe */
	PROFILE_XPOINT				/* 3DXPoint: in-place writes, no FTL */
} ProfileKind;

extern const char *const profile_kind_names[];

typedef struct DeviceProfile
{
	char	   *name;
	ProfileKind kind;
	double		read_latency_us;	/* random 4 KB read at queue depth 1 */
	double		write_latency_us;
	double		seq_read_mbps;	/* MB/s = 10^6 bytes/s */
	double		seq_write_mbps;
	double		rand_read_iops_qd32;	/* 4 KB at high queue depth */
	double		rand_write_iops_qd32;
	int			channels;		/* requests served at once */
	double		interference_us;	/* a read of a region written since
									 * the last read waits this long */
	/* NAND flash only (0 otherwise) */
	int			flash_page_bytes;	/* FTL mapping unit */
	int			pages_per_block;
	double		erase_latency_us;
	double		overprovision_percent;
	/* HDD only (0 otherwise) */
	double		rpm;
	int			track_kb;		/* jumps within this distance need no seek */
	double		avg_seek_ms;	/* HDD: data-sheet average seek (model 2) */

	/*
	 * Model 2 (docs/devices.md, "Model versions"): the drive's own DRAM
	 * cache and its real capacity.  Model 1 ignores all of these, so runs
	 * made with it keep their meaning.
	 */
	int			model_version;	/* 1: drive = index file, no cache; 2; 3 */
	double		cache_mb;		/* data cache in the drive (2^20 bytes); 0: none */
	double		cache_hit_us;	/* command overhead of a cache hit */
	bool		cache_write_back;	/* writes acknowledged from the cache */
	double		interface_mbps; /* host link, for cache hits; 0: seq_read_mbps */
	double		capacity_gb;	/* drive capacity (10^9 bytes); 0: the file */
	double		min_seek_ms;	/* HDD: track-to-track seek */

	/* Model 3 (docs/devices.md, "Model versions"); models 1 and 2 ignore it */
	double		readahead_kb;	/* a read miss also caches this much after
								 * the page (2^10 bytes); 0: none */
} DeviceProfile;

static inline bool
profile_has_ftl(const DeviceProfile *p)
{
	return p->kind == PROFILE_SSD || p->kind == PROFILE_NVME;
}

/* The model version a profile asks for that adds the drive cache. */
#define PROFILE_MODEL_CACHE 2
/* The model version that adds read-ahead and command streams. */
#define PROFILE_MODEL_STREAMS 3

#endif							/* FEST_PROFILE_H */
