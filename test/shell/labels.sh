#!/usr/bin/env bash
# Labels that show what varies (issue 28 item 6), without a server:
# run-workload's shown labels leave out the keys every configuration shares
# and rep=; scripts/report pairs a candidate with the baseline that agrees
# with it on every key both have (an R*-tree differing from an R-tree in
# structure, split and reinsert finds it), names a candidate with several
# baselines instead of choosing, and prints values to significant digits.
# Charts and notes (item 10): a chart's legend names every configuration
# drawn in any panel, in the colour it has in every panel, and the I/O per
# height panels share their y axis; the reproduce report's note column says
# the claim's note for a claim that holds too, and how far ours is from the
# paper's value.
source "$(dirname "$0")/lib/tap.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tap_plan 10

py() { /usr/bin/python3 -c "import sys; sys.path[:0] = ['$ROOT/scripts/lib']; $1" 2>&1; }

tap_is "$(py "
import workload as w
exp = {'name': 'x', 'structures': [{'structure': 'rtree', 'options': {'split': 'linear'}},
                                   {'structure': 'rstartree', 'options': {'reinsert': 30}}],
       'frameworks': [{'framework': 'none'}], 'page_sizes': [4096, 8192],
       'devices': [{'name': 'ssd'}], 'builds': [{'method': 'insert', 'max_points': None}]}
cs = w.matrix(exp)
k = w.label_keys(exp, cs)
print(' '.join(f'{a}={b}' for a, b in k.items()), '|', w.shown_label(w.base_label(exp, cs[0]) + ' workload=build rep=2', k))")" \
    "framework=none device=ssd build=insert | exp=x structure=rtree split=linear page=4096 workload=build" \
    "constant keys found over the matrix; the shown label keeps what varies, drops them and rep="

pairs() { py "
import report as r
def C(label, wall):
    return r.Config(label, [dict({m[0]: None for m in r.METRICS + [(e[0],) for e in r.EXTRA]},
                                 wall_seconds=wall, reads_per_level=None, label=label)])
cs = [C(l, v) for l, v in [$1]]
named = r.baseline_selector('$2')
base = {c.key for c in cs if r.is_baseline(c, '$2', named)}
contrast, pairs, unmatched = r.pair_with_baseline(cs, base, named)
print(';'.join(f'{c.key} <- {b.key}' for b, c in pairs), '|',
      ';'.join(f'{c.key} ?' + ','.join(b.key for b in m) for c, m in unmatched))"; }
tap_is "$(pairs "('structure=rtree split=linear page=4096 workload=build', 10), ('structure=rstartree reinsert=30 page=4096 workload=build', 8), ('structure=rstartree reinsert=30 page=8192 workload=build', 8), ('structure=rtree split=linear page=8192 workload=build', 9)" 'structure=rtree')" \
    "structure=rstartree reinsert=30 page=4096 workload=build <- structure=rtree split=linear page=4096 workload=build;structure=rstartree reinsert=30 page=8192 workload=build <- structure=rtree split=linear page=8192 workload=build | " \
    "--baseline structure=rtree: the R*-tree (structure, split and reinsert differ) has its baseline per page"
tap_is "$(pairs "('structure=rtree split=linear page=4096', 10), ('structure=rtree split=quadratic page=4096', 9), ('structure=rstartree reinsert=30 page=4096', 8)" 'structure=rtree')" \
    " | structure=rstartree reinsert=30 page=4096 ?structure=rtree split=linear page=4096,structure=rtree split=quadratic page=4096" \
    "two R-tree splits: the candidate is listed with both, not paired with one at random"
tap_is "$(pairs "('exp=a structure=rtree split=linear page=4096', 10), ('exp=a structure=rstartree reinsert=30 page=4096', 8)" '% structure=rtree %')" \
    "exp=a structure=rstartree reinsert=30 page=4096 <- exp=a structure=rtree split=linear page=4096 | " \
    "a LIKE pattern pairs the same way"
out=$(py "
import report as r
r.baseline_selector('structure rtree')")
tap_like "$out" "give key=value tokens" "a --baseline that is neither tokens nor a LIKE pattern is refused"
tap_is "$(py "
import report as r
print(r.fmt('wall_seconds', 0.0034209), r.fmt('wall_seconds', 12.3456), r.fmt('wall_seconds', 12345.6),
      r.fmt('pages_read', 4033.0), r.fmt('write_amplification', 1.23456), r.fmt_gain(-34.9271))")" \
    "0.003421 12.35 12346 4033 1.235 -34.9" "values print to 4 significant digits (gains 3), counts whole"
tap_is "$(py "
import report as r
print(r.sig(0.5), r.sig(100), r.sig(-0.000123456))")" "0.5000 100.0 -0.0001235" "sig keeps significant digits, no exponent"

tap_is "$(py "
import report as r, matplotlib.figure as mf
seen = {}
orig = mf.Figure.legend
def spy(self, *a, **k):
    seen['names'] = [h.get_label() for h in k.get('handles', a[0] if a else [])]
    seen['colours'] = [tuple(round(x, 3) for x in h.get_facecolor()) for h in k.get('handles', a[0] if a else [])]
    return orig(self, *a, **k)
mf.Figure.legend = spy
bars = {}
orig_bar = r.plt.Axes.bar
def bar(self, xs, ys, *a, **k):
    for y in ys:
        bars[y] = tuple(round(x, 3) for x in k['facecolor'])
    return orig_bar(self, xs, ys, *a, **k)
r.plt.Axes.bar = bar
def C(label, wall):
    return r.Config(label, [dict({m[0]: None for m in r.METRICS + [(e[0],) for e in r.EXTRA]},
                                 wall_seconds=wall, reads_per_level=None, label=label)])
cs = [C('structure=gridfile page=4096 device=b workload=build', 1.0),
      C('structure=lbgrid page=4096 device=a workload=build', 2.0),
      C('structure=lbgrid page=4096 device=b workload=build', 3.0)]
r.bar_chart(cs, 'wall_seconds', 's', 't', '/dev/null', 50)
print(seen['names'], bars[2.0] == bars[3.0], bars[1.0] != bars[3.0],
      dict(zip(seen['names'], seen['colours']))['structure=lbgrid'] == bars[3.0])")" \
    "['structure=gridfile', 'structure=lbgrid'] True True True" \
    "the legend names the configurations of every panel, each in the colour its bars have in every panel"
tap_is "$(py "
import report as r
orig = r.plt.subplots
got = {}
def sub(*a, **k):
    got.update(k)
    return orig(*a, **k)
r.plt.subplots = sub
c = r.Config('structure=rtree page=4096 device=a workload=build',
             [dict({m[0]: None for m in r.METRICS + [(e[0],) for e in r.EXTRA]},
                   reads_per_level={0: 10.0, 1: 1.0}, label='x')])
d = r.Config('structure=rtree page=4096 device=b workload=build',
             [dict({m[0]: None for m in r.METRICS + [(e[0],) for e in r.EXTRA]},
                   reads_per_level={0: 1000.0, 1: 1.0}, label='y')])
r.height_chart([c, d], 't', '/dev/null', 50)
print(got.get('sharey'))")" "True" "the I/O per height panels share one y axis"
tap_is "$(py "
import reproduce_report as rr
c = {'id': 'x', 'note': 'The paper says so.', 'paper_value': 2.0}
print(rr.claim_note(c, {'status': 'holds', 'ours': 2828.0}, None, 1414.0))")" \
    "The paper says so. Ours is 1,414× the paper's value (2,828 against 2)." \
    "a claim that holds shows its note, and that ours is 1,414 times the paper's value"
tap_done
