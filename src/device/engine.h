/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  I/O engines: how a file device hands an array of page requests to
 *	  the kernel.
 *
 * The file device (device/file.c) owns the descriptor, the timers and the
 * counters; an engine only moves pages.  A batch of n requests becomes:
 *	sync		n pread/pwrite calls (n submissions);
 *	libaio		io_submit of up to IO_ENGINE_MAX_DEPTH iocbs at a time,
 *				then io_getevents until all completed (ceil(n / depth)
 *				submissions);
 *	io_uring	the same with one io_uring_submit_and_wait per chunk;
 *	mmap		reads: n copies out of a shared mapping of the file (n
 *				submissions); writes: the sync engine's.
 * Thesis section 4.1.6 counts such batches as one I/O each, which is what
 * the read_submissions / write_submissions counters report.
 *
 * Every request of a batch has completed (or failed) before transfer
 * returns or raises an error, so callers may free their buffers after an
 * ERROR.  A short transfer is finished synchronously; reading past the end
 * of the file yields zeros, as with the sync engine.
 *
 * IDENTIFICATION
 *	  src/device/engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_ENGINE_H
#define FEST_ENGINE_H

#include "device/device.h"

/*
 * Largest number of requests in flight for one submission: a flushing unit
 * or a batch query larger than this is submitted in several chunks.  256
 * is above any queue depth the papers use (NVMe gains flatten near 32-64).
 */
#define IO_ENGINE_MAX_DEPTH 256

typedef struct IOEngine IOEngine;

typedef struct IOEngineOps
{
	/* Move n pages (write or read); returns the submissions it used. */
	int			(*transfer) (IOEngine *e, PageIORequest *reqs, int n, bool write);
	/* The file now holds npages pages (optional: NULL if nothing kept). */
	void		(*truncated) (IOEngine *e, uint64 npages);
	/* Release kernel resources; never raises an error. */
	void		(*close) (IOEngine *e);
} IOEngineOps;

struct IOEngine
{
	const IOEngineOps *ops;
	int			fd;
	uint32		page_size;
	const char *path;			/* for messages */
};

/*
 * Create the engine for an open descriptor (current memory context).
 * Raises FEATURE_NOT_SUPPORTED when the kernel refuses the engine.
 */
extern IOEngine *io_engine_create(DeviceEngine engine, int fd,
								  uint32 page_size, const char *path);

/* Raise the same error now if the engine cannot be used in this process. */
extern void io_engine_require(DeviceEngine engine);

/* engine_sync.c */
extern IOEngine *engine_sync_create(int fd, uint32 page_size, const char *path);
extern void engine_sync_probe(void);
extern void engine_finish_page(IOEngine *e, PageIORequest *req, size_t done,
							   bool write);
extern void engine_report_failure(IOEngine *e, PageIORequest *req, bool write,
								  int err);
extern int	engine_settle_chunk(IOEngine *e, PageIORequest *chunk, int m,
								int submitted, const long *results, bool write);

/* engine_libaio.c */
extern IOEngine *engine_libaio_create(int fd, uint32 page_size, const char *path);
extern void engine_libaio_probe(void);

/* engine_io_uring.c */
extern IOEngine *engine_io_uring_create(int fd, uint32 page_size, const char *path);
extern void engine_io_uring_probe(void);

/* engine_mmap.c */
extern IOEngine *engine_mmap_create(int fd, uint32 page_size, const char *path);
extern void engine_mmap_probe(void);

/* engine.c */
extern void engine_unavailable(const char *engine, int err, const char *call);

#endif							/* FEST_ENGINE_H */
