from exp import *
C = collections.Counter()
def pos(L, ln):
    k = 0
    for i in range(ln - 2, -1, -1):
        if L[i].startswith('## '): return k
        if L[i].startswith('- '): k += 1
    return k
for d in QS:
    q = d['q']; ev = {(e['path'], int(e['line'])) for e in q['evidence']}
    L = LINES[d['conv']]; cat = q['category']
    for e in ev: C[(cat, 'ev', min(pos(L[e[0]], e[1]), 3))] += 1
    for h in d['hits'][:10]:
        if any((h[0], ln) in ev for ln in range(h[1], h[2]+1)): continue
        C[(cat, 'fill', min(pos(L[h[0]], h[1]), 3))] += 1
for cat in (1, 2, 4):
    for kind in ('ev', 'fill'):
        tot = sum(C[(cat, kind, p)] for p in range(4))
        print(cat, kind, [round(C[(cat, kind, p)] / tot, 3) for p in range(4)], tot)
