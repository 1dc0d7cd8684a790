"""Data generators of scripts/run-workload that festival's SQL generators lack.

"buildings": a stand-in for the 534,926 building footprints of Brazil that
Carniel et al. 2016 (GeoInfo) and 2017 (JIDM) indexed ("complex regions
possibly with holes": hospitals, schools, universities, houses, stadiums,
OpenStreetMap; Carniel et al. 2017, "Spatial datasets for conducting
experimental evaluations of spatial indices", SBBD Dataset Showcase).  The
data set is not available offline and the papers give only its size, its
kind of objects and its extent (the MBR of Brazil), so every other property
below is an assumption, chosen to look like OpenStreetMap building
footprints and written down here and in docs/experiments.md:

  where   Settlements, round(n / 4000) of them (134 for the papers' size),
          their centers uniform over the extent's inner 90 % (no land mask),
          their sizes Zipf-distributed (s = 1: the largest holds about 1/H(k)
          of the buildings, 18 % for k = 134, as OSM's buildings concentrate
          in a few metropolitan areas).  A building lies at its settlement's
          center plus a Gaussian offset whose standard deviation grows with
          the settlement: 0.05 degrees x sqrt(buildings / 4000), clamped to
          0.01-0.3 degrees (a city of 100,000 buildings spreads over about
          +-0.5 degrees, 50 km), redrawn when it leaves the extent.
  size    Footprint area log-normal, median 150 m^2, sigma of the log 1.0
          (95 % between 21 and 1,070 m^2; the tail holds schools and
          stadiums of 10,000 m^2 and more); aspect ratio uniform in 1-3;
          orientation uniform.
  shape   The outer ring is star-shaped around the building's center (so it
          is simple and valid): 4 vertices (a rectangle) with probability
          0.55, 5-8 with 0.30, 9-40 with 0.15 (geometric tail), each vertex's
          radius 70-100 % of the outline's, angles jittered; closing vertex
          not counted.
  holes   2 % of the buildings (courtyards, stadiums) have one hole: a
          rectangle around the center of 10-25 % of the outline's size
          (every edge of the ring stays at least 41 % of the size from the
          center: radii of at least 70 %, angles jittered by at most a
          quarter step, so the hole lies inside).
  units   Degrees (SRID 0, as festival's other generators), metres converted
          at 111,320 m per degree of latitude and cos(latitude) for longitude.

Equal arguments give identical rows (Python's Mersenne Twister, seeded).
"""

import math
import random

M_PER_DEGREE = 111320.0
BUILDINGS_PER_SETTLEMENT = 4000


def _zipf_sizes(n, k, rng):
    weights = [1.0 / (r + 1) for r in range(k)]
    rng.shuffle(weights)
    total = sum(weights)
    sizes = [int(n * w / total) for w in weights]
    for i in range(n - sum(sizes)):
        sizes[i % k] += 1
    return sizes


def _ring(cx, cy, radius_m, aspect, angle, nv, rng, lat):
    """A star-shaped ring (list of (x, y), closed) around (cx, cy) in degrees."""
    mx = M_PER_DEGREE * max(0.2, math.cos(math.radians(lat)))
    pts = []
    if nv == 4:
        base = [math.pi / 4, 3 * math.pi / 4, 5 * math.pi / 4, 7 * math.pi / 4]
        radii = [1.0] * 4
    else:
        base = sorted((2 * math.pi * (i + rng.uniform(-0.25, 0.25))) / nv for i in range(nv))
        radii = [rng.uniform(0.7, 1.0) for _ in range(nv)]
    for a, r in zip(base, radii):
        # an ellipse of the aspect ratio, rotated
        ux = math.cos(a) * radius_m * r * math.sqrt(aspect)
        uy = math.sin(a) * radius_m * r / math.sqrt(aspect)
        x = ux * math.cos(angle) - uy * math.sin(angle)
        y = ux * math.sin(angle) + uy * math.cos(angle)
        pts.append((cx + x / mx, cy + y / M_PER_DEGREE))
    pts.append(pts[0])
    return pts


def _wkt_ring(pts):
    return "(" + ",".join(f"{x:.8f} {y:.8f}" for x, y in pts) + ")"


def building_rows(n, seed, extent):
    """(id, WKT) of n building footprints (see the module's docstring)."""
    rng = random.Random(seed)
    xmin, ymin, xmax, ymax = extent
    w, h = xmax - xmin, ymax - ymin
    k = max(1, round(n / BUILDINGS_PER_SETTLEMENT))
    centers = [(xmin + w * rng.uniform(0.05, 0.95), ymin + h * rng.uniform(0.05, 0.95))
               for _ in range(k)]
    sizes = _zipf_sizes(n, k, rng)
    # buildings are listed settlement by settlement, then shuffled: the
    # insertion order of the papers' table is not known, and a random order is
    # what festival's other generators give
    owner = [s for s, m in enumerate(sizes) for _ in range(m)]
    rng.shuffle(owner)
    sigma = [min(0.3, max(0.01, 0.05 * math.sqrt(m / BUILDINGS_PER_SETTLEMENT))) for m in sizes]
    for i, s in enumerate(owner, 1):
        cx0, cy0 = centers[s]
        while True:
            cx = rng.gauss(cx0, sigma[s])
            cy = rng.gauss(cy0, sigma[s])
            if xmin < cx < xmax and ymin < cy < ymax:
                break
        area = math.exp(rng.gauss(math.log(150.0), 1.0))
        aspect = rng.uniform(1.0, 3.0)
        angle = rng.uniform(0, math.pi)
        u = rng.random()
        if u < 0.55:
            nv = 4
        elif u < 0.85:
            nv = rng.randint(5, 8)
        else:
            nv = min(40, 9 + int(rng.expovariate(1 / 6.0)))
        # radius such that the outline's area is about the drawn area
        radius = math.sqrt(area / (2.0 if nv == 4 else math.pi * 0.72))
        outer = _ring(cx, cy, radius, aspect, angle, nv, rng, cy)
        rings = [_wkt_ring(outer)]
        if rng.random() < 0.02:
            inner = _ring(cx, cy, radius * rng.uniform(0.10, 0.25), aspect, angle, 4, rng, cy)
            rings.append(_wkt_ring(list(reversed(inner))))
        yield i, "POLYGON(" + ",".join(rings) + ")"


GENERATORS = {"buildings": building_rows}
