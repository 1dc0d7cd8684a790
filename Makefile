# festival: PGXS build.
#
#   make                      build (warnings are errors)
#   make install              install into the PostgreSQL of $(PG_CONFIG)
#   make installcheck         pg_regress tests against a running server
#   make FEST_ASSERT=1 ...    build with PostgreSQL's Assert()s on (scripts/test
#                             always does; benchmarks and the demo never do)
#
# PG_CONFIG defaults to Debian's PostgreSQL 15 when present.

EXTENSION    = festival
EXTVERSION   = 0.2
MODULE_big   = festival

SRCS         = $(sort $(wildcard src/*/*.c))
OBJS         = $(SRCS:.c=.o)
FEST_HEADERS  = $(wildcard src/*.h src/*/*.h)

DATA         = festival--$(EXTVERSION).sql $(wildcard upgrade/festival--*.sql)

REGRESS      = fixture device create_validation modify predicates reopen check runs frameworks flash_units structures snapshot splits rstartree bulk_spill knn knn_batch dwithin query_batch batch_arrays root_kept window_levels cache_frames hilbert_rtree xbrtree xbrtree_ssd fast_ordered fortree gridfile gridfile_knn gridfile_grid lbgrid agrid results devices_sim engines tiers tiers_buffers tiers_tuning drive_model replay
REGRESS_OPTS = --inputdir=. --outputdir=. --load-extension=postgis --load-extension=festival

ifeq ($(origin PG_CONFIG), undefined)
  ifneq ($(wildcard /usr/lib/postgresql/15/bin/pg_config),)
    PG_CONFIG = /usr/lib/postgresql/15/bin/pg_config
  else
    PG_CONFIG = pg_config
  endif
endif

GEOS_CONFIG ?= geos-config

PG_CPPFLAGS  = -I$(srcdir)/src $(shell $(GEOS_CONFIG) --cflags)
PG_CFLAGS    = -Wall -Wextra -Werror -Wno-unused-parameter \
               -Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK   = $(shell $(GEOS_CONFIG) --clibs) -laio -luring -Wl,--version-script=$(srcdir)/festival.map

# Assertions: the flags a build used are kept in .build-flags, which every
# object depends on and which is rewritten only when they change, so that
# switching FEST_ASSERT rebuilds everything (a benchmark never runs objects
# compiled for the tests, nor the tests objects compiled without asserts).
# Pass the same FEST_ASSERT to "make install" as to "make".
FEST_ASSERT ?= 0
ifeq ($(FEST_ASSERT),1)
  FEST_BUILD_FLAGS = -DUSE_ASSERT_CHECKING
else
  FEST_BUILD_FLAGS =
endif
PG_CFLAGS   += $(FEST_BUILD_FLAGS)
EXTRA_CLEAN  = .build-flags

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.build-flags: FORCE
	@echo '$(FEST_BUILD_FLAGS)' | cmp -s - $@ || echo '$(FEST_BUILD_FLAGS)' > $@
.PHONY: FORCE

$(OBJS) $(OBJS:.o=.bc): $(FEST_HEADERS) .build-flags
$(MODULE_big)$(DLSUFFIX): festival.map
