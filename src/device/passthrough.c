/*-------------------------------------------------------------------------
 *
 * passthrough.c
 *	  A PageIO layer that changes nothing: the smallest layer there is.
 *
 * Every operation passes to the layer below (its PageIOOps are all NULL,
 * see device/pageio.h), so the whole layer is an ops table and a
 * constructor.  It also hands on the frames of a page cache below it,
 * since it changes no byte a read returns.  festival.passthrough_layers
 * puts one above every layer of each chain an index opens
 * (tier/tier_chain.c's page_chain_open): the files, answers and counters must
 * stay exactly as without them (test/passthrough.pg).  It is the template
 * for a new layer: copy it, and set the operations the layer changes.
 *
 * IDENTIFICATION
 *	  src/device/passthrough.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/device.h"

static const PageIOOps passthrough_pageio_ops = {0};

/* A layer over below that passes every call on, in the current context. */
PageIO *
passthrough_pageio_create(PageIO *below)
{
	PageIO	   *io = palloc0(sizeof(PageIO));

	pageio_wrap_init(io, &passthrough_pageio_ops, below);
	/* it changes nothing a read returns: the cache's extras stay usable */
	io->frames = below->frames;
	return io;
}
